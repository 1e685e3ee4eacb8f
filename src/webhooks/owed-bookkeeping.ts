import { performance } from "node:perf_hooks";
import type { ClaimedEvent } from "./outbox-claim-repo.js";
import type { Finished, OutboxBookkeeping } from "./outbox-repo.js";

/** Entries of each kind remembered; beyond this (a very long outage under load) their claims' lease applies. */
const MAX_OWED = 1000;
/**
 * A lost claim whose rows were found nowhere is looked for again at most this often (real time: a rate limit of a
 * scan of the outbox, not a business date) until its lease runs out.
 */
export const LOST_CLAIM_RECHECK_MS = 250;

/** A claim whose answer was lost: its token, and when its lease runs out (the injected clock's time, as the claim's). */
interface LostClaim {
  readonly token: string;
  readonly leaseUntil: number;
}

/**
 * Bookkeeping the database did not take (it was away, or the answer was lost), owed until it answers again.
 *
 * A live dispatcher that fails to write a claim, an answered attempt or a release keeps its claims (its heartbeat
 * goes on, so nobody takes them over): without this, their resources would wait out the lease — the webhook
 * timeout + 30 s — after the database came back. The dispatcher settles what it owes before its next claim, which
 * it tries again every poll interval while the database is away: once the database answers, the answered events
 * are recorded (not sent again), the unsent ones released, and the claim that follows picks them up. A lost claim
 * is released whenever its rows are found, as long as its lease runs: its commit may still be under way on the
 * server when the dispatcher first looks (settle).
 */
export class OwedBookkeeping {
  /** Claims whose answer was lost: each may have committed, or may still commit. */
  #lostClaims: LostClaim[] = [];
  /** When lost claims found nowhere are looked for again (elapsedMs); at once after a claim is lost. */
  #recheckAt = Number.NEGATIVE_INFINITY;
  /** Answered attempts not recorded: their events are still claimed, and were sent. */
  #answered: Finished[] = [];
  /** Claimed events not sent and not released. */
  #unsent: ClaimedEvent[] = [];
  /** Tokens of the claims whose chains are being delivered now, and how many chains each. */
  readonly #holding = new Map<string, number>();
  /** The database failed this dispatcher since its own claims were last checked (releaseOwnClaims). */
  #checkOwnClaims = false;
  readonly #elapsedMs: () => number;

  /** `elapsedMs`: a monotonic time in milliseconds (tests pass their own). */
  constructor(elapsedMs: () => number = () => performance.now()) {
    this.#elapsedMs = elapsedMs;
  }

  get empty(): boolean {
    return this.#lostClaims.length + this.#answered.length + this.#unsent.length === 0;
  }

  /** A chain of this claim is being delivered: the claim is not released as forgotten. */
  hold(claimToken: string): void {
    this.#holding.set(claimToken, (this.#holding.get(claimToken) ?? 0) + 1);
  }

  unhold(claimToken: string): void {
    const n = (this.#holding.get(claimToken) ?? 1) - 1;
    if (n > 0) this.#holding.set(claimToken, n);
    else this.#holding.delete(claimToken);
  }

  /** The database failed a claim or bookkeeping: it was away, or another server answers now (a failover). */
  outage(): void {
    this.#checkOwnClaims = true;
  }

  claimLost(claimToken: string, leaseUntil: Date): void {
    this.#checkOwnClaims = true;
    if (this.#lostClaims.length < MAX_OWED)
      this.#lostClaims.push({ token: claimToken, leaseUntil: leaseUntil.getTime() });
    this.#recheckAt = Number.NEGATIVE_INFINITY;
  }

  notRecorded(finished: readonly Finished[]): void {
    this.#checkOwnClaims = true;
    this.#answered.push(...finished.slice(0, MAX_OWED - this.#answered.length));
  }

  notReleased(events: readonly ClaimedEvent[]): void {
    this.#checkOwnClaims = true;
    this.#unsent.push(...events.slice(0, MAX_OWED - this.#unsent.length));
  }

  /**
   * Writes what is owed; throws (keeping it owed) while the database is still away. Each write is idempotent — a
   * statement whose answer was lost may have committed: the outbox rows are matched by their claim token, and an
   * attempt already in the event log is not written twice.
   */
  async settle(outbox: OutboxBookkeeping, now: Date, owner?: string): Promise<void> {
    if (this.#lostClaims.length > 0 && this.#elapsedMs() >= this.#recheckAt) {
      const found = await outbox.releaseClaimTokens(this.#lostClaims.map((c) => c.token));
      // A claim found nowhere did not commit — or has not yet: a commit waiting for a synchronous standby (a new
      // primary under synchronous_mode_strict) whose connection the liveness probe cut goes through once the standby
      // is back, and its rows, locked and looking unclaimed meanwhile, are then claimed by this live dispatcher,
      // which never sends them. So it is looked for again until its lease runs out (then anyone may take its rows).
      this.#lostClaims = this.#lostClaims.filter((c) => !found.has(c.token) && c.leaseUntil > now.getTime());
      this.#recheckAt = this.#elapsedMs() + LOST_CLAIM_RECHECK_MS;
    }
    if (this.#answered.length > 0) {
      await outbox.recordAndStart(this.#answered, [], now);
      this.#answered = [];
    }
    if (this.#unsent.length > 0) {
      await outbox.releaseClaimed(this.#unsent);
      this.#unsent = [];
    }
    // Last, once what this dispatcher knows it owes is written: rows still claimed under its id by a claim it does not
    // hold are ones the database forgot it settled (a failover lost the last bookkeeping commits of the old primary).
    if (this.#checkOwnClaims && owner !== undefined) {
      await outbox.releaseOwnClaims(owner, [...this.#holding.keys()]);
      this.#checkOwnClaims = false;
    }
  }
}
