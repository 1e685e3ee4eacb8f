/**
 * Deliveries of one organization in flight at once, by default half the slots: an organization whose endpoint is
 * slow or black-holed holds at most these, and the other half always serves everyone else (docs/webhooks.md).
 */
export const defaultPerOrganization = (concurrency: number): number => Math.max(1, Math.floor(concurrency / 2));

/** The dispatcher's slots by organization: who is at its share, and how much one claim may take. */
export class OrganizationShares {
  readonly #perOrganization: number;
  readonly #inFlight = new Map<string, number>();

  constructor(perOrganization: number) {
    this.#perOrganization = perOrganization;
  }

  /**
   * What the next claim of up to `free` resources may take: none of an organization at its share (`exclude`), and
   * never so many that one organization could pass its share in this claim (`limit`: the room the fullest
   * organization below its share has left).
   */
  plan(free: number): { limit: number; exclude: string[] } {
    const exclude: string[] = [];
    let fullest = 0;
    for (const [organization, n] of this.#inFlight) {
      if (n >= this.#perOrganization) exclude.push(organization);
      else fullest = Math.max(fullest, n);
    }
    return { limit: Math.min(free, this.#perOrganization - fullest), exclude };
  }

  /** Runs one delivery chain of `organization`, counted against its share while in flight. */
  async run(organization: string, work: () => Promise<void>): Promise<void> {
    this.#inFlight.set(organization, (this.#inFlight.get(organization) ?? 0) + 1);
    try {
      await work();
    } finally {
      const left = (this.#inFlight.get(organization) ?? 1) - 1;
      if (left <= 0) this.#inFlight.delete(organization);
      else this.#inFlight.set(organization, left);
    }
  }
}
