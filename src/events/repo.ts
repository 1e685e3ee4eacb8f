import { sql } from "kysely";
import type { Db } from "../storage/database.js";

export interface EventRow {
  readonly id: string;
  readonly seq: number;
  readonly txid: string;
  readonly organization_id: string;
  readonly directory_id: string | null;
  /** `scim` (a SCIM client's request) or `admin` (the admin API). */
  readonly source: string;
  readonly event: string;
  readonly create_time: Date;
  /**
   * When the event entered the feed: its `create_time`, or its release for an event a deprovisioning guard held
   * (docs/deprovisioning.md). Retention counts from it.
   */
  readonly feed_time: Date;
  readonly data: string;
}

export interface FeedQuery {
  readonly organizationId: string;
  readonly directoryId?: string | undefined;
  readonly events?: readonly string[] | undefined;
  readonly after: { readonly txid: string; readonly seq: number };
  readonly limit: number;
}

/** When an event entered the feed; the retention's BRIN index (0033-released-events) is on this very expression. */
const FEED_TIME = sql`coalesce(release_time, create_time)`;

const COLUMNS = sql`e.id, e.seq, e.txid::text as txid, e.organization_id, e.directory_id, e.source, e.event, e.create_time,
  coalesce(e.release_time, e.create_time) as feed_time, e.data`;

/**
 * The next events after a position, in (txid, seq) order, only from transactions older than every transaction
 * still running: `pg_snapshot_xmin` of the statement's snapshot is the oldest transaction not finished when it
 * started, so every event below it is committed (or never will be) and visible now — no later commit can land
 * behind a position already handed out. Served by the (organization_id | directory_id, txid, seq) indexes.
 */
export async function eventsAfter(db: Db, q: FeedQuery): Promise<EventRow[]> {
  const scope =
    q.directoryId === undefined
      ? sql`e.organization_id = ${q.organizationId}::uuid`
      : sql`e.directory_id = ${q.directoryId} and e.organization_id = ${q.organizationId}::uuid`;
  // Every kind unless the reader names the kinds it reads (docs/events.md): a reader ignores the kinds it does not know.
  const kinds = q.events === undefined || q.events.length === 0 ? sql`` : sql`and e.event = any(${q.events}::text[])`;
  const { rows } = await sql<EventRow>`
    select ${COLUMNS} from directory_events e
    where ${scope} ${kinds}
      and (e.txid, e.seq) > (${q.after.txid}::xid8, ${q.after.seq}::bigint)
      and e.txid < pg_snapshot_xmin(pg_current_snapshot())
    order by e.txid, e.seq
    limit ${q.limit}`.execute(db);
  return rows;
}

/** The feed's horizon now: every event at or after (xmin, 0) is handed out later, none before it. */
export async function horizon(db: Db): Promise<string> {
  const { rows } = await sql<{ xmin: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`.execute(
    db,
  );
  return rows[0]?.xmin ?? "0";
}

/**
 * What a position issued so far can hold: txid up to the horizon, seq up to the last number the sequence gave out
 * (both read without touching the table).
 */
export async function feedBounds(db: Db): Promise<{ horizon: string; lastSeq: number }> {
  const { rows } = await sql<{ xmin: string; seq: string | null }>`
    select pg_snapshot_xmin(pg_current_snapshot())::text as xmin,
      pg_sequence_last_value(pg_get_serial_sequence('directory_events', 'seq')::regclass)::text as seq`.execute(db);
  const row = rows[0];
  return { horizon: row?.xmin ?? "0", lastSeq: Number(row?.seq ?? 0) };
}

export async function eventById(db: Db, id: string): Promise<EventRow | undefined> {
  const { rows } = await sql<EventRow>`select ${COLUMNS} from directory_events e where e.id = ${id}::uuid`.execute(db);
  return rows[0];
}

/** Rows deleted per statement by the pruner: short statements, no long lock, writes never wait on it. */
const PRUNE_BATCH = 5000;
/** One prune run deletes at most this many rows; the next run (an hour later, or another instance) goes on. */
const PRUNE_MAX = 500_000;

/**
 * Retention: deletes events that entered the feed before `cutoff`, in batches (BRIN on that time); returns how many.
 */
export async function pruneEvents(db: Db, cutoff: Date): Promise<number> {
  let total = 0;
  while (total < PRUNE_MAX) {
    const r = await sql`delete from directory_events where ctid = any(array(
        select ctid from directory_events where ${FEED_TIME} < ${cutoff} limit ${PRUNE_BATCH}))`.execute(db);
    const n = Number(r.numAffectedRows ?? 0);
    total += n;
    if (n < PRUNE_BATCH) break;
  }
  return total;
}

/** The feed's storage, bound to one pool: what EventFeed reads and prunes, without holding the pool itself. */
export interface EventStore {
  after(q: FeedQuery): Promise<EventRow[]>;
  horizon(): Promise<string>;
  bounds(): Promise<{ horizon: string; lastSeq: number }>;
  byId(id: string): Promise<EventRow | undefined>;
  prune(cutoff: Date): Promise<number>;
}

export const eventStore = (db: Db): EventStore => ({
  after: (q) => eventsAfter(db, q),
  horizon: () => horizon(db),
  bounds: () => feedBounds(db),
  byId: (id) => eventById(db, id),
  prune: (cutoff) => pruneEvents(db, cutoff),
});
