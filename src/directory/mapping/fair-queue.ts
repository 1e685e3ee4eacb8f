/**
 * Jobs queued per tenant (an organization), taken round robin across tenants, with at most `perTenant` jobs of one
 * tenant running at once: a tenant whose jobs are slow waits behind its own jobs only (docs/security.md "Tenant
 * isolation").
 */
export class FairQueue<J> {
  readonly #perTenant: number;
  readonly #maxQueuedPerTenant: number;
  /** Insertion order is the round robin: a tenant served goes to the back. */
  readonly #queues = new Map<string, J[]>();
  readonly #running = new Map<string, number>();
  #size = 0;

  constructor(perTenant: number, maxQueuedPerTenant: number) {
    this.#perTenant = perTenant;
    this.#maxQueuedPerTenant = maxQueuedPerTenant;
  }

  /** Jobs waiting, all tenants together. */
  get size(): number {
    return this.#size;
  }

  /** Queues a job; false when the tenant already has `maxQueuedPerTenant` waiting. */
  push(tenant: string, job: J): boolean {
    const queue = this.#queues.get(tenant);
    if (queue === undefined) this.#queues.set(tenant, [job]);
    else if (queue.length >= this.#maxQueuedPerTenant) return false;
    else queue.push(job);
    this.#size++;
    return true;
  }

  /** Takes a job out of the queue before it ran (its wait ran out); false when it was not waiting. */
  remove(tenant: string, job: J): boolean {
    const queue = this.#queues.get(tenant);
    const at = queue?.indexOf(job) ?? -1;
    if (queue === undefined || at < 0) return false;
    queue.splice(at, 1);
    if (queue.length === 0) this.#queues.delete(tenant);
    this.#size--;
    return true;
  }

  /**
   * The next job to run, from the first tenant in round-robin order that is below its share (and `allowed`);
   * counted as running.
   */
  take(allowed: (tenant: string) => boolean = () => true): { tenant: string; job: J } | undefined {
    for (const [tenant, queue] of this.#queues) {
      if ((this.#running.get(tenant) ?? 0) >= this.#perTenant || !allowed(tenant)) continue;
      const job = queue.shift();
      if (job === undefined) continue;
      this.#size--;
      this.#queues.delete(tenant);
      if (queue.length > 0) this.#queues.set(tenant, queue);
      this.#running.set(tenant, (this.#running.get(tenant) ?? 0) + 1);
      return { tenant, job };
    }
    return undefined;
  }

  /** A job taken for this tenant finished. */
  done(tenant: string): void {
    const running = (this.#running.get(tenant) ?? 1) - 1;
    if (running <= 0) this.#running.delete(tenant);
    else this.#running.set(tenant, running);
  }

  /** Every waiting job, removed (on shutdown). */
  drain(): J[] {
    const all = [...this.#queues.values()].flat();
    this.#queues.clear();
    this.#size = 0;
    return all;
  }
}
