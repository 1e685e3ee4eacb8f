import { type RawBuilder, sql } from "kysely";
import { uuidv7 } from "../platform/ids.js";
import type { OutboxBatch } from "./event-port.js";

/**
 * The rows of a SCIM connection's `batch` to publish now, as the body of the `ev_rows` clause of the statement that
 * writes a change's events: `roster_route_events` (0030-deprovisioning-guard) counts the batch's deprovisioning events
 * against its connection's guard, trips the guard when the window's count exceeds both limits (writing the
 * `connection.deprovisioning_held` event itself), and holds the whole batch in `held_events` while the connection
 * holds a deprovisioning change or any earlier event of the same resource. Held batches yield no rows here, so none
 * of their rows is expanded into `api_key.*` events while held.
 *
 * Columns: id, event, ordering_key, data, body, key_actor, key_id, n (the event's position in the batch). Nothing
 * is written unless `when` holds.
 */
export function guardedEventRows(batch: OutboxBatch, when: RawBuilder<unknown>): RawBuilder<unknown> {
  const rows = JSON.stringify(batch.rows);
  const tripId = uuidv7(batch.createdAt.getTime());
  return sql`select g.id, g.event, g.ordering_key, g.data, g.body, g.key_actor, g.key_id, g.n
    from roster_route_events((select ${when}), ${batch.organizationId}::uuid, ${batch.directoryId}::text,
      ${batch.createdAt}::timestamptz, ${batch.webhook}::boolean, ${batch.traceparent}::text, ${rows}::json,
      ${tripId}::uuid) as g`;
}
