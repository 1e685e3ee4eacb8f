import { type RawBuilder, sql } from "kysely";
import { uuidv7 } from "../platform/ids.js";
import { batchMayDeprovision, type OutboxBatch, type OutboxRow } from "./event-port.js";

/** A batch's rows, from the JSON `j` (OutboxRow[]), as `r`: id, event, ordering_key, data, body, key_actor, key_id, n. */
export const batchRows = (j: RawBuilder<unknown>) => sql`rows from (json_to_recordset(${j})
        as (id uuid, event text, "orderingKey" text, data text, body text, "keyActor" uuid, "keyId" uuid))
        with ordinality as r(id, event, ordering_key, data, body, key_actor, key_id, n)`;

/**
 * The WITH-list entries that route a SCIM connection's `batch` through its deprovisioning guard, ending with
 * `ev_rows`: the rows to publish now (columns id, event, ordering_key, data, body, key_actor, key_id, n — n the
 * event's position in the batch). Nothing is written unless `when` holds. `rows` is JSON.stringify(batch.rows), made
 * once by the caller.
 *
 * A batch that may deprovision goes through `roster_route_events` (0030-deprovisioning-guard), which counts its
 * deprovisioning events against the connection's guard, trips the guard when the window's count exceeds both limits
 * (writing the `connection.deprovisioning_held` event itself), and holds the whole batch in `held_events` while the
 * connection holds a deprovisioning change or any earlier event of the same resource. Held batches yield no rows in
 * `ev_rows`, so none of their rows is expanded into `api_key.*` events while held.
 */
export function guardedEventClauses(batch: OutboxBatch, rows: string, when: RawBuilder<unknown>): RawBuilder<unknown> {
  if (batchMayDeprovision(batch)) {
    const tripId = uuidv7(batch.createdAt.getTime());
    return sql`ev_rows as (select g.id, g.event, g.ordering_key, g.data, g.body, g.key_actor, g.key_id, g.n
      from roster_route_events((select ${when}), ${batch.organizationId}::uuid, ${batch.directoryId}::text,
        ${batch.createdAt}::timestamptz, ${batch.webhook}::boolean, ${batch.traceparent}::text, ${rows}::json,
        ${tripId}::uuid) as g)`;
  }
  // A batch that deprovisions nothing is held only behind a held event of one of its resources, and never goes
  // through the guard's counting function. Held events exist only while the guard is tripped: its row settles the
  // question for every other write, and the keys are looked up (0038-held-plans) only behind it. A held event of
  // this very resource committed after the statement's snapshot came with a write of the same row, which the
  // statement's row lock or version guard meets first. `roster_hold_batch` (0041-held-batches) then holds the batch
  // under the guard row's shared lock, or answers that the hold ended meanwhile. The test runs once, in `ev_p`.
  return sql`ev_p as materialized (select q.j, ${heldBehind(batch, sql`q.j`, when)} as held
        from (select ${rows}::json as j) q),
      ev_rows as (select r.id, r.event, r.ordering_key, r.data, r.body, r.key_actor, r.key_id, r.n
        from ev_p p, ${batchRows(sql`p.j`)}
        where not p.held and ${when})`;
}

/**
 * Whether a batch that deprovisions nothing is held behind a held event of one of its resources (see
 * guardedEventClauses), holding it if so; `json` is the batch's rows as the hold function takes them, evaluated only
 * when it is called.
 */
function heldBehind(batch: OutboxBatch, json: RawBuilder<unknown>, when: RawBuilder<unknown>): RawBuilder<unknown> {
  const keys = batch.rows.map((r) => r.orderingKey);
  const dir = sql`${batch.directoryId}::text`;
  return sql`coalesce((select g.tripped_time is not null from deprovisioning_guards g where g.client_id = ${dir}), false)
        and roster_holds_any(${dir}, ${keys}::text[])
        and roster_hold_batch((select ${when}), ${batch.organizationId}::uuid, ${dir}, ${batch.createdAt}::timestamptz,
          ${batch.webhook}::boolean, ${batch.traceparent}::text, ${json})`;
}

/** The columns of `ev_rows`, and of `ev_one`. */
const ROW_COLUMNS = sql`id, event, ordering_key, data, body, key_actor, key_id, n`;

/** The one event of a batch that stands for no API keys and deprovisions nothing (most writes), if it is one. */
export function singleEventOf(batch: OutboxBatch): OutboxRow | undefined {
  const [first] = batch.rows;
  if (batch.rows.length !== 1 || first === undefined || first.keyActor !== undefined || first.keyId !== undefined) {
    return undefined;
  }
  return batchMayDeprovision(batch) ? undefined : first;
}

/** Whether a batch goes through its connection's deprovisioning guard, which may hold it: a SCIM connection's. */
export const mayBeHeldBehind = (batch: OutboxBatch): boolean => batch.source === "scim" && batch.directoryId !== null;

/**
 * The WITH-list entries ending with `ev_rows` for a batch of one event that stands for no API keys and deprovisions
 * nothing: most writes (singleEventOf). The event travels as parameters (`ev_one`), not as a JSON array: the
 * statement then parses no JSON and needs no row function or sort for it. A SCIM connection's event is held, as
 * guardedEventClauses holds one, behind a held event of its resource; only then is the JSON array the hold function
 * takes built, from `ev_one`.
 *
 * `unheld`: the writer knows its resource has no held event, so the test is left out. A held event of a resource
 * is only ever written by a write of that resource's row, which changes the row's version: a writer whose own
 * last write of the row flowed (heldColumn), and whose statement is guarded by the version that write left, knows
 * it. Neither a release nor a discard of held events can add one.
 */
export function singleEventClauses(
  batch: OutboxBatch,
  row: OutboxRow,
  when: RawBuilder<unknown>,
  unheld: boolean,
): RawBuilder<unknown> {
  const one = sql`ev_one as (select ${row.id}::uuid as id, ${row.event}::text as event,
        ${row.orderingKey}::text as ordering_key, ${row.data}::text as data, ${row.body}::text as body,
        null::uuid as key_actor, null::uuid as key_id, 1::bigint as n)`;
  if (!mayBeHeldBehind(batch) || unheld) {
    return sql`${one}, ev_rows as (select ${ROW_COLUMNS} from ev_one where ${when})`;
  }
  const json = sql`(select json_build_array(json_build_object('id', o.id, 'event', o.event,
        'orderingKey', o.ordering_key, 'data', o.data, 'body', o.body)) from ev_one o)`;
  return sql`${one}, ev_p as materialized (select ${heldBehind(batch, json, when)} as held),
      ev_rows as (select ${ROW_COLUMNS} from ev_p p, ev_one where not p.held and ${when})`;
}

/**
 * For a batch that may deprovision, a column `claim_spared` of the writing statement's result: whether the write
 * can skip the guard's post-commit claim of the trip warning, because it cannot be the write that tripped the guard
 * without announcing it. Either its connection's guard was tripped and its trip announced, as the statement's
 * snapshot saw the guard row, or its batch flowed (`ev_rows` holds rows): a write that trips the guard holds its
 * own batch. A trip made by this very statement is not seen in the snapshot: its batch is held, so its write
 * claims the warning after commit. Nothing for other batches.
 */
export function claimSparedColumn(batch: OutboxBatch | undefined): RawBuilder<unknown> {
  if (batch === undefined || batch.directoryId === null || !batchMayDeprovision(batch)) return sql``;
  return sql`, (exists (select 1 from ev_rows) or coalesce((select g.tripped_time is not null and g.warned
    from deprovisioning_guards g where g.client_id = ${batch.directoryId}::text), false)) as claim_spared`;
}

/**
 * For a SCIM connection's batch of one event (singleEventClauses), a column `held` of the writing statement's
 * result: whether its event was held (never, when `unheld` left the test out). Nothing for other batches, whose
 * outcome the writer leaves unknown.
 */
export function heldColumn(batch: OutboxBatch | undefined, unheld: boolean): RawBuilder<unknown> {
  if (batch === undefined || !mayBeHeldBehind(batch) || singleEventOf(batch) === undefined) return sql``;
  return unheld ? sql`, false as held` : sql`, (select p.held from ev_p p) as held`;
}
