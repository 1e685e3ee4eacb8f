import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { Deliverer, type DelivererOptions } from "./delivery.js";
import { GroupCommit } from "./group-commit.js";
import { type ClaimedEvent, chainsOf, claimDue, type OutboxKey } from "./outbox-claim-repo.js";
import { type Finished, outboxBookkeeping, releaseClaimed } from "./outbox-repo.js";
import { defaultPerOrganization, OrganizationShares } from "./organization-shares.js";
import { OwedBookkeeping } from "./owed-bookkeeping.js";
import { DEFAULT_HEARTBEAT_MS, Heartbeat, Retention, type RetentionOptions } from "./upkeep-repo.js";

export { MAX_INTERRUPTED, RETRY_SCHEDULE_MS } from "./delivery.js";
export { DEFAULT_HEARTBEAT_MS, PRUNE_INTERVAL_MS, STALE_HEARTBEATS } from "./upkeep-repo.js";

export const DEFAULT_CONCURRENCY = 64;
/** Events of one resource claimed together and sent back to back (the head of its key and those after it). */
export const DEFAULT_CHAIN = 32;
export const DEFAULT_POLL_INTERVAL_MS = 1000;
/**
 * After a claim that did not fill every free slot, the next one waits this long (wake-ups in between are gathered):
 * under a stream of single writes, one claim and one record commit then serve every event of the interval instead
 * of one each — the dispatcher's share of the CPU, which a write with a webhook pays in latency, shrinks with it.
 */
export const DEFAULT_CLAIM_INTERVAL_MS = 10;
/**
 * After a failed claim, the next one waits at least this long (then for a wake-up or the rest of the poll interval):
 * at most a few failing claims a second in an outage, and soon after the first commit once it ends.
 */
export const CLAIM_RETRY_MIN_MS = 200;
/** A lease outlives the request timeout by this much before another dispatcher may take the event over. */
export const LEASE_MARGIN_MS = 30_000;

/** Where it claims and records (`db`), what it sends with (DelivererOptions), what it prunes (RetentionOptions). */
export interface DispatcherOptions extends DelivererOptions, RetentionOptions {
  /** ROSTER_WEBHOOK_TIMEOUT_MS; the claim lease is this plus LEASE_MARGIN_MS. */
  readonly timeoutMs: number;
  /** Deliveries in flight at once, across resources (one per resource at a time). */
  readonly concurrency?: number;
  /** Deliveries of one organization in flight at once; default half of `concurrency`. */
  readonly perOrganization?: number;
  /** Up to this many pending events of one resource are claimed at once and sent one after the other. */
  readonly chain?: number;
  /** How often an idle dispatcher looks for events committed by other instances. */
  readonly pollIntervalMs?: number;
  /** Least time between two claims of the running loop unless the last one filled every free slot (0: none). */
  readonly claimIntervalMs?: number;
  /** ROSTER_WEBHOOK_HEARTBEAT_MS: heartbeat interval; a dispatcher silent for 5 intervals is taken for dead. */
  readonly heartbeatMs?: number;
}

/**
 * Delivers outbox events (docs/webhooks.md): claims due rows (FOR UPDATE SKIP LOCKED), one per resource at a
 * time and in commit order, sends up to `concurrency` at once, records each attempt, and retries a failure only
 * when the connection opted in (`webhook.retry = "backoff"`, RETRY_SCHEDULE_MS; the retry time lives in the outbox).
 *
 * Crash safety: every attempt is marked started in PostgreSQL before it is sent (the claim marks the head; each later
 * event of a chain is marked in the same statement that records the one before it), so at most one attempt per
 * resource is ever unfinished. Each dispatcher keeps a heartbeat row; when it dies, its claims are taken over as soon
 * as its heartbeat is `STALE_HEARTBEATS` intervals old (or at once when its row is gone), the unfinished attempt is
 * written to the event log as interrupted, and the event is sent again with the same `webhook-id` (at-least-once).
 * A live dispatcher that stops answering loses its claims when their lease (`timeoutMs + LEASE_MARGIN_MS`) runs out.
 *
 * `start()` runs a loop woken by `wake()` (after local commits) and by a poll interval (commits of other
 * instances); `runOnce()` and `drain()` run it by hand for tests and tools, no sleeping involved.
 */
export class WebhookDispatcher {
  readonly #o: DispatcherOptions;
  readonly #concurrency: number;
  readonly #shares: OrganizationShares;
  readonly #chain: number;
  readonly #pollMs: number;
  readonly #claimIntervalMs: number;
  readonly #heartbeat: Heartbeat;
  readonly #retention: Retention;
  #lastClaimAt = Number.NEGATIVE_INFINITY;
  /** Where the next claim looks first: resources are served round robin in key order. */
  #cursor: OutboxKey | undefined;
  /** What failed to be written in an outage, written before the next claim. */
  readonly #owed = new OwedBookkeeping();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #deliverer: Deliverer;
  readonly #commits: GroupCommit;
  readonly #settleOwed: (now: Date) => Promise<void>;
  #loop: Promise<void> | undefined;
  #stopping = false;
  #wakeRequested = false;
  #wakeUp: (() => void) | undefined;
  #pruning: Promise<void> | undefined;

  constructor(options: DispatcherOptions) {
    this.#o = options;
    this.#concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    const share = options.perOrganization ?? defaultPerOrganization(this.#concurrency);
    this.#shares = new OrganizationShares(Math.min(this.#concurrency, share));
    this.#chain = options.chain ?? DEFAULT_CHAIN;
    this.#pollMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.#claimIntervalMs = options.claimIntervalMs ?? DEFAULT_CLAIM_INTERVAL_MS;
    this.#heartbeat = new Heartbeat(options.db, options.logger, options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
    this.#retention = new Retention(options);
    this.#deliverer = new Deliverer(options);
    const outbox = outboxBookkeeping(options.db);
    this.#settleOwed = (now) => this.#owed.settle(outbox, now, this.#heartbeat.id);
    this.#commits = new GroupCommit(outbox, options.clock, options.logger, (f) => this.#owed.notRecorded(f));
  }

  /** The id its claims carry (webhook_dispatchers.id). */
  get id(): string {
    return this.#heartbeat.id;
  }

  get running(): boolean {
    return this.#loop !== undefined && !this.#stopping;
  }

  start(): void {
    if (this.#loop !== undefined) return;
    this.#stopping = false;
    this.#heartbeat.start();
    this.#loop = this.#run();
  }

  /** Something may be due now (a local commit, a finished delivery). Cheap; a no-op when not started. */
  wake(): void {
    this.#wakeRequested = true;
    this.#wakeUp?.();
  }

  /** Graceful: stop claiming, let in-flight deliveries finish and their attempts be recorded. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.wake();
    await this.#loop;
    await Promise.all(this.#inFlight);
    await this.#commits.settled();
    await this.#pruning;
    this.#loop = undefined;
    await this.#heartbeat.stop();
  }

  /** Claims one batch (up to `concurrency` resources, `chain` events each), delivers and records it; returns its size. */
  async runOnce(): Promise<number> {
    const claimed = await this.#claim(this.#concurrency);
    await Promise.all(chainsOf(claimed).map((c) => this.#counted(c)));
    return claimed.length;
  }

  /** runOnce until nothing is claimable (events leased by another dispatcher are left to it). */
  async drain(): Promise<number> {
    let total = 0;
    for (let n = await this.runOnce(); n > 0; n = await this.runOnce()) total += n;
    return total;
  }

  /** Deletes event-log entries older than the retention period; returns how many. */
  prune(): Promise<number> {
    return this.#retention.prune();
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      try {
        // Retention runs beside the claims: a large prune must not hold deliveries back.
        this.#pruning ??= this.#retention
          .maybePrune()
          .catch((e: unknown) => this.#o.logger.error({ err: e }, "webhook dispatcher: pruning failed"))
          .finally(() => {
            this.#pruning = undefined;
          });
        const free = this.#concurrency - this.#inFlight.size;
        // Claims are commits: wait for a quarter of the slots to free up rather than claim one row at a time.
        if (free > 0 && (free >= this.#concurrency / 4 || this.#inFlight.size === 0)) {
          this.#lastClaimAt = performance.now();
          const chains = chainsOf(await this.#claim(free));
          for (const chain of chains) this.#track(this.#counted(chain));
          if (chains.length === free) continue;
        }
      } catch (e) {
        this.#o.logger.error({ err: e }, "webhook dispatcher: claiming failed; retrying after the poll interval");
        this.#owed.outage();
        // Again after the poll interval, or at the next wake-up — a write that committed: the database answers again,
        // and what the write queued, and the outage's leftovers, are due — but never sooner than CLAIM_RETRY_MIN_MS,
        // so that wake-ups that are no commits (deliveries ending) cannot make a failing claim a busy loop.
        const floor = Math.min(CLAIM_RETRY_MIN_MS, this.#pollMs);
        await new Promise<void>((resolve) => setTimeout(resolve, floor).unref());
        await this.#idle(this.#pollMs - floor);
        continue;
      }
      await this.#idle();
      await this.#pace();
    }
  }

  #track(delivery: Promise<void>): void {
    this.#inFlight.add(delivery);
    void delivery.finally(() => {
      this.#inFlight.delete(delivery);
      this.wake();
    });
  }

  /** Real time, not the injected clock: a rate limit of this process, not a business date. */
  async #pace(): Promise<void> {
    const wait = this.#lastClaimAt + this.#claimIntervalMs - performance.now();
    if (wait <= 0 || this.#stopping) return;
    await new Promise<void>((resolve) => setTimeout(resolve, wait).unref());
  }

  /** Until a wake-up, or `ms` (the poll interval). */
  async #idle(ms = this.#pollMs): Promise<void> {
    if (this.#wakeRequested || this.#stopping) {
      this.#wakeRequested = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      const self = this;
      function done() {
        clearTimeout(timer);
        self.#wakeUp = undefined;
        resolve();
      }
      this.#wakeUp = done;
    });
    this.#wakeRequested = false;
  }

  /** Delivers a chain, counted against its organization's share of the slots while in flight. */
  #counted(chain: readonly ClaimedEvent[]): Promise<void> {
    const token = chain[0]?.claimToken ?? "";
    this.#owed.hold(token);
    const run = this.#shares.run(chain[0]?.organizationId ?? "", () => this.#deliverChain(chain));
    return run.finally(() => this.#owed.unhold(token));
  }

  /** Claims up to `free` resources, within every organization's share (organization-shares.ts). */
  async #claim(free: number): Promise<ClaimedEvent[]> {
    const { limit, exclude } = this.#shares.plan(free);
    const now = this.#o.clock.now();
    await this.#heartbeat.beatIfDue();
    // Settled first: a connection cut after a claim committed (a terminated backend, a reset) or an outage during a
    // delivery's bookkeeping leaves claims whose owner — this live dispatcher — keeps its lease.
    await this.#settleOwed(now);
    const claimToken = randomBytes(12).toString("base64url");
    const leaseUntil = new Date(now.getTime() + this.#o.timeoutMs + LEASE_MARGIN_MS);
    const claim = await claimDue(this.#o.db, {
      owner: this.#heartbeat.id,
      ownerStaleMs: this.#heartbeat.staleMs,
      limit,
      now,
      leaseUntil,
      chain: this.#chain,
      leaseStepMs: this.#o.timeoutMs,
      claimToken,
      after: this.#cursor,
      excludeOrganizations: exclude,
    }).catch((e: unknown) => {
      this.#owed.claimLost(claimToken, leaseUntil);
      throw e;
    });
    this.#cursor = claim.cursor ?? this.#cursor;
    return claim.events;
  }

  /**
   * One resource's claimed events, in order: each is sent once the one before it was answered and recorded — the
   * statement that records it also marks the next one started (group commit across chains). On shutdown, or when
   * another dispatcher took the resource over, the events not yet started are released.
   */
  async #deliverChain(events: readonly ClaimedEvent[]): Promise<void> {
    let finished: Finished | undefined;
    for (const [i, event] of events.entries()) {
      if (i > 0) {
        const next = this.#stopping ? undefined : event;
        const started = await this.#commits.book(finished, next);
        finished = undefined;
        if (!started) {
          await this.#release(events.slice(i));
          return;
        }
      }
      finished = await this.#deliverer.deliver(event);
      if (finished.retryAt !== undefined) {
        // The head waits for its retry: the events behind it go back unsent, in order.
        await this.#commits.book(finished, undefined);
        await this.#release(events.slice(i + 1));
        return;
      }
    }
    if (finished !== undefined) await this.#commits.book(finished, undefined);
  }

  /** Claimed events not sent: back to the pool now, or once the database answers again. */
  async #release(events: readonly ClaimedEvent[]): Promise<void> {
    await releaseClaimed(this.#o.db, events).catch((e: unknown) => {
      this.#o.logger.error({ err: e }, "webhook dispatcher: releasing claimed events failed (retried)");
      this.#owed.notReleased(events);
    });
  }
}
