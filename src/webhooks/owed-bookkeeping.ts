import type { ClaimedEvent } from "./outbox-claim-repo.js";
import type { Finished, OutboxBookkeeping } from "./outbox-repo.js";

/** Entries of each kind remembered; beyond this (a very long outage under load) their claims' lease applies. */
const MAX_OWED = 1000;

/**
 * Bookkeeping the database did not take (it was away, or the answer was lost), owed until it answers again.
 *
 * A live dispatcher that fails to write a claim, an answered attempt or a release keeps its claims (its heartbeat
 * goes on, so nobody takes them over): without this, their resources would wait out the lease — the webhook
 * timeout + 30 s — after the database came back. The dispatcher settles what it owes before its next claim, which
 * it tries again every poll interval while the database is away: once the database answers, the answered events
 * are recorded (not sent again), the unsent ones released, and the claim that follows picks them up.
 */
export class OwedBookkeeping {
  /** Tokens of claims whose answer was lost: each may have committed. */
  #claimTokens: string[] = [];
  /** Answered attempts not recorded: their events are still claimed, and were sent. */
  #answered: Finished[] = [];
  /** Claimed events not sent and not released. */
  #unsent: ClaimedEvent[] = [];

  get empty(): boolean {
    return this.#claimTokens.length + this.#answered.length + this.#unsent.length === 0;
  }

  claimLost(claimToken: string): void {
    if (this.#claimTokens.length < MAX_OWED) this.#claimTokens.push(claimToken);
  }

  notRecorded(finished: readonly Finished[]): void {
    this.#answered.push(...finished.slice(0, MAX_OWED - this.#answered.length));
  }

  notReleased(events: readonly ClaimedEvent[]): void {
    this.#unsent.push(...events.slice(0, MAX_OWED - this.#unsent.length));
  }

  /**
   * Writes what is owed; throws (keeping it owed) while the database is still away. Each write is idempotent — a
   * statement whose answer was lost may have committed: the outbox rows are matched by their claim token, and an
   * attempt already in the event log is not written twice.
   */
  async settle(outbox: OutboxBookkeeping, now: Date): Promise<void> {
    if (this.#claimTokens.length > 0) {
      await outbox.releaseClaimTokens(this.#claimTokens);
      this.#claimTokens = [];
    }
    if (this.#answered.length > 0) {
      await outbox.recordAndStart(this.#answered, [], now);
      this.#answered = [];
    }
    if (this.#unsent.length > 0) {
      await outbox.releaseClaimed(this.#unsent);
      this.#unsent = [];
    }
  }
}
