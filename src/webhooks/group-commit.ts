import type { Clock } from "../platform/clock.js";
import type { Logger } from "../platform/logger.js";
import type { ClaimedEvent } from "./outbox-claim-repo.js";
import type { Finished, OutboxBookkeeping } from "./outbox-repo.js";

/** One entry of the group commit: an answered event to record, and/or the next event of its chain to mark started. */
interface Bookkeeping {
  readonly finished: Finished | undefined;
  readonly start: ClaimedEvent | undefined;
  readonly resolve: (started: boolean) => void;
}

/**
 * The dispatcher's bookkeeping, group-committed: what every chain queues while a write is under way (answered
 * attempts, the next events to mark started) is written together by the next statement (recordAndStart).
 */
export class GroupCommit {
  readonly #outbox: OutboxBookkeeping;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #notRecorded: (finished: readonly Finished[]) => void;
  #queue: Bookkeeping[] = [];
  #flushing: Promise<void> | undefined;

  /** `notRecorded`: told of the answered attempts a failed write did not record (they stay claimed). */
  constructor(
    outbox: OutboxBookkeeping,
    clock: Clock,
    logger: Logger,
    notRecorded: (finished: readonly Finished[]) => void,
  ) {
    this.#outbox = outbox;
    this.#clock = clock;
    this.#logger = logger;
    this.#notRecorded = notRecorded;
  }

  /** Queues bookkeeping; resolves once written, with whether `start` was marked started. */
  book(finished: Finished | undefined, start: ClaimedEvent | undefined): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      this.#queue.push({ finished, start, resolve });
      this.#flushing ??= this.#flush();
    });
  }

  /** Resolves when nothing queued is left unwritten. */
  async settled(): Promise<void> {
    await this.#flushing;
  }

  async #flush(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue;
      this.#queue = [];
      let started = new Set<number>();
      const finished = batch.flatMap((b) => (b.finished === undefined ? [] : [b.finished]));
      try {
        started = await this.#outbox.recordAndStart(
          finished,
          batch.flatMap((b) => (b.start === undefined ? [] : [b.start])),
          this.#clock.now(),
        );
      } catch (e) {
        // The answered events stay claimed: recorded once the database answers again (OwedBookkeeping); the events
        // to start are not sent, and their chains release them.
        this.#logger.error({ err: e, events: batch.length }, "webhook dispatcher: recording attempts failed");
        this.#notRecorded(finished);
      }
      for (const b of batch) b.resolve(b.start !== undefined && started.has(b.start.seq));
    }
    this.#flushing = undefined;
  }
}
