import type { Clock } from "../platform/clock.js";
import type { EventRow, EventStore } from "./repo.js";
import { type FeedPosition, type FeedTokens, START } from "./token.js";

export const DEFAULT_EVENT_RETENTION_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;
/** How far ahead of this instance's clock a legacy token's time may be (instances' clocks differ a little). */
const LEGACY_CLOCK_SKEW_MS = 60_000;

export interface FeedRequest {
  readonly organizationId: string;
  readonly directoryId?: string | undefined;
  readonly events?: readonly string[] | undefined;
  /** Undefined: from the oldest retained event; "now": from this moment on; otherwise a `next_after` token. */
  readonly after: string | undefined;
  readonly pageSize: number;
}

export type FeedPage =
  | { readonly ok: true; readonly events: readonly EventRow[]; readonly nextAfter: string }
  | { readonly ok: false; readonly reason: "expired" }
  | { readonly ok: false; readonly reason: "invalid"; readonly message: string };

const NOT_OURS = "after must be a next_after token of this organization's feed, or now";

/**
 * The events feed (docs/events.md): every committed directory change, once, in an order consistent with each
 * resource's commit order, from any position no older than the retention period.
 */
export class EventFeed {
  readonly #store: EventStore;
  readonly #clock: Clock;
  readonly #retentionMs: number;

  readonly #tokens: FeedTokens;

  constructor(store: EventStore, clock: Clock, retentionDays: number, tokens: FeedTokens) {
    this.#store = store;
    this.#clock = clock;
    this.#retentionMs = retentionDays * DAY_MS;
    this.#tokens = tokens;
  }

  async page(r: FeedRequest): Promise<FeedPage> {
    const now = this.#clock.now().getTime();
    const organizationId = r.organizationId.toLowerCase();
    const sign = (p: FeedPosition) => this.#tokens.encode(organizationId, p);
    if (r.after === "now") {
      return { ok: true, events: [], nextAfter: sign({ txid: await this.#store.horizon(), seq: 0, timeMs: now }) };
    }
    let after: FeedPosition | undefined;
    if (r.after !== undefined) {
      const decoded = this.#tokens.decode(organizationId, r.after);
      if (decoded === undefined) return { ok: false, reason: "invalid", message: NOT_OURS };
      if (decoded.kind === "legacy" && !(await this.#withinIssued(decoded.position, now))) {
        return {
          ok: false,
          reason: "invalid",
          message: `${NOT_OURS}: this unsigned token is beyond any position issued`,
        };
      }
      after = decoded.position;
    }
    // A position older than the retention period may have had events after it pruned: the consumer must reconcile.
    if (after !== undefined && after.timeMs < now - this.#retentionMs) return { ok: false, reason: "expired" };
    const from = after ?? START;
    const events = await this.#store.after({
      organizationId,
      directoryId: r.directoryId,
      events: r.events,
      after: from,
      limit: r.pageSize,
    });
    const last = events.at(-1);
    const next =
      last !== undefined
        ? { txid: last.txid, seq: last.seq, timeMs: last.feed_time.getTime() }
        : (after ?? { ...START, timeMs: now });
    return { ok: true, events, nextAfter: sign(next) };
  }

  /**
   * Whether an unsigned token of the earlier format names a position this feed could have issued: not past the
   * horizon, not past the last event number taken, not in the future. A forged one far ahead would otherwise answer
   * no events, forever, to a consumer who would never know it is stuck.
   */
  async #withinIssued(p: FeedPosition, now: number): Promise<boolean> {
    if (p.timeMs > now + LEGACY_CLOCK_SKEW_MS) return false;
    const bounds = await this.#store.bounds();
    return BigInt(p.txid) <= BigInt(bounds.horizon) && p.seq <= bounds.lastSeq;
  }

  get(id: string): Promise<EventRow | undefined> {
    return this.#store.byId(id);
  }

  /**
   * Deletes events that entered the feed longer ago than the retention period (ROSTER_EVENT_RETENTION_DAYS): a held
   * event counts from its release, not its change. Returns how many.
   */
  prune(): Promise<number> {
    return this.#store.prune(new Date(this.#clock.now().getTime() - this.#retentionMs));
  }
}
