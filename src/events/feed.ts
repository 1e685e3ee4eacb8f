import type { Clock } from "../platform/clock.js";
import type { Db } from "../storage/database.js";
import { type EventRow, eventById, eventsAfter, horizon, pruneEvents } from "./repo.js";
import { type FeedPosition, START, encodePosition } from "./token.js";

export const DEFAULT_EVENT_RETENTION_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface FeedRequest {
  readonly organizationId: string;
  readonly directoryId?: string | undefined;
  readonly events?: readonly string[] | undefined;
  /** Undefined: from the oldest retained event; "now": from this moment on. */
  readonly after: FeedPosition | "now" | undefined;
  readonly pageSize: number;
}

export type FeedPage =
  | { readonly ok: true; readonly events: readonly EventRow[]; readonly nextAfter: string }
  | { readonly ok: false; readonly reason: "expired" };

/**
 * The events feed (docs/events.md): every committed directory change, once, in an order consistent with each
 * resource's commit order, from any position no older than the retention period.
 */
export class EventFeed {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #retentionMs: number;

  constructor(db: Db, clock: Clock, retentionDays: number) {
    this.#db = db;
    this.#clock = clock;
    this.#retentionMs = retentionDays * DAY_MS;
  }

  async page(r: FeedRequest): Promise<FeedPage> {
    const now = this.#clock.now().getTime();
    if (r.after === "now") {
      return {
        ok: true,
        events: [],
        nextAfter: encodePosition({ txid: await horizon(this.#db), seq: 0, timeMs: now }),
      };
    }
    // A position older than the retention period may have had events after it pruned: the consumer must reconcile.
    if (r.after !== undefined && r.after.timeMs < now - this.#retentionMs) return { ok: false, reason: "expired" };
    const from = r.after ?? START;
    const events = await eventsAfter(this.#db, {
      organizationId: r.organizationId,
      directoryId: r.directoryId,
      events: r.events,
      after: from,
      limit: r.pageSize,
    });
    const last = events.at(-1);
    const next =
      last !== undefined
        ? { txid: last.txid, seq: last.seq, timeMs: last.create_time.getTime() }
        : (r.after ?? { ...START, timeMs: now });
    return { ok: true, events, nextAfter: encodePosition(next) };
  }

  get(id: string): Promise<EventRow | undefined> {
    return eventById(this.#db, id);
  }

  /** Deletes events past the retention period (ROSTER_EVENT_RETENTION_DAYS); returns how many. */
  prune(): Promise<number> {
    return pruneEvents(this.#db, new Date(this.#clock.now().getTime() - this.#retentionMs));
  }
}
