import { type Kysely, sql } from "kysely";
import { replaceInRouteEvents } from "./0035-active-user-counts.js";

/**
 * Whether a write's resources have held events is a lookup per resource. Until autovacuum first analyzes
 * `held_events` — up to a minute after a trip has filled it — the planner takes it for nearly empty, and both checks
 * (the function's join of the batch's keys, and the `= any(keys)` test of a write that deprovisions nothing,
 * storage/event-guard.ts) planned as a read of every held row of the connection: 0.6–0.9 ms per call at 3 000 held
 * rows, on every later write of the connection. An index on `(client_id, ordering_key)` serves the equality of both
 * columns, and the function's check is one bounded lookup per key (a lateral `limit 1`, which the planner cannot
 * turn into a join over all the rows). A plan cached while the table was still empty is not re-planned by this
 * (docs/performance.md). `held_events_key_idx` stays: the API keys' check reads by the key alone.
 */
const JOIN_ALL_HELD = `join held_events h on h.ordering_key = coalesce(r."keyActor"::text, r."orderingKey")
            and h.client_id = p_dir where`;
const LOOKUP_PER_KEY = `cross join lateral (select 1 from held_events h where h.client_id = p_dir
            and h.ordering_key = coalesce(r."keyActor"::text, r."orderingKey") limit 1) h where`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index held_events_client_key_idx on held_events (client_id, ordering_key)`.execute(db);
  await replaceInRouteEvents(db, JOIN_ALL_HELD, LOOKUP_PER_KEY);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await replaceInRouteEvents(db, LOOKUP_PER_KEY, JOIN_ALL_HELD);
  await sql`drop index held_events_client_key_idx`.execute(db);
}
