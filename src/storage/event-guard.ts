import { type RawBuilder, sql } from "kysely";
import { uuidv7 } from "../platform/ids.js";
import { mayDeprovision, type OutboxBatch } from "./event-port.js";

/**
 * The rows of a SCIM connection's `batch` to publish now, as the body of the `ev_rows` clause of the statement that
 * writes a change's events: `roster_route_events` (0030-deprovisioning-guard) counts the batch's deprovisioning events
 * against its connection's guard, trips the guard when the window's count exceeds both limits (writing the
 * `connection.deprovisioning_held` event itself), and holds the whole batch in `held_events` while the connection
 * holds a deprovisioning change or any earlier event of the same resource. Held batches yield no rows here, so none
 * of their rows is expanded into `api_key.*` events while held.
 *
 * Columns: id, event, ordering_key, data, body, key_actor, key_id, n (the event's position in the batch). Nothing
 * is written unless `when` holds. `rows` is JSON.stringify(batch.rows), made once by the caller.
 */
export function guardedEventRows(batch: OutboxBatch, rows: string, when: RawBuilder<unknown>): RawBuilder<unknown> {
  const tripId = uuidv7(batch.createdAt.getTime());
  const routed = (json: RawBuilder<unknown>) => sql`select g.id, g.event, g.ordering_key, g.data, g.body, g.key_actor,
      g.key_id, g.n
    from roster_route_events((select ${when}), ${batch.organizationId}::uuid, ${batch.directoryId}::text,
      ${batch.createdAt}::timestamptz, ${batch.webhook}::boolean, ${batch.traceparent}::text, ${json}, ${tripId}::uuid)
      as g`;
  if (batch.rows.some(mayDeprovision)) return routed(sql`${rows}::json`);
  // A batch that deprovisions nothing is held only behind a held event of one of its resources (the function's
  // tests when it counts nothing): decided here in SQL, so such a write skips the guard's function and parses none
  // of its rows' data, even while its connection holds other users' changes. The test is made once, in `p`, and
  // filters each branch: the function runs only when it would hold the batch. A held event of this very resource
  // committed after this statement's snapshot came with a write of the same row, which the statement's row lock or
  // version guard meets first.
  const keys = batch.rows.map((r) => r.orderingKey);
  // Held events exist only while the connection's guard is tripped: its row, by key, settles the question for every
  // other write; the lookup of the keys (0038-held-plans) runs only behind it.
  const holds = sql`(coalesce((select g.tripped_time is not null from deprovisioning_guards g
    where g.client_id = ${batch.directoryId}::text), false)
    and roster_holds_any(${batch.directoryId}::text, ${keys}::text[]))`;
  // `offset 0` keeps `p` a subquery of its own: pulled up, its test would be copied into both branches and run twice.
  return sql`select v.* from (select ${rows}::json as j, ${holds} as held offset 0) p, lateral (
      select r.id, r.event, r.ordering_key, r.data, r.body, r.key_actor, r.key_id, r.n
      from rows from (json_to_recordset(p.j)
        as (id uuid, event text, "orderingKey" text, data text, body text, "keyActor" uuid, "keyId" uuid))
        with ordinality as r(id, event, ordering_key, data, body, key_actor, key_id, n)
      where ${when} and not p.held
      union all
      ${routed(sql`p.j`)} where p.held
    ) v`;
}

/**
 * For a batch that may deprovision, a column `trip_announced` of the writing statement's result: whether its
 * connection's guard was tripped and its trip announced, as the statement's snapshot saw the guard row (a trip made
 * by this very statement is not seen: its write claims the warning after commit). Nothing for other batches.
 */
export function tripAnnouncedColumn(batch: OutboxBatch | undefined): RawBuilder<unknown> {
  if (batch === undefined || batch.directoryId === null || !batch.rows.some(mayDeprovision)) return sql``;
  return sql`, coalesce((select g.tripped_time is not null and g.warned from deprovisioning_guards g
    where g.client_id = ${batch.directoryId}::text), false) as trip_announced`;
}
