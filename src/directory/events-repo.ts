import { type RawBuilder, sql, type Transaction } from "kysely";
import type { Db } from "../storage/database.js";
import { preparedStatement } from "../storage/prepared.js";
import type { Database } from "../storage/schema.js";
import type { DirectoryEvent, EventClient, EventSink, OutboxBatch } from "./events.js";
import { guardedEventRows } from "./deprovisioning-guard/route-repo.js";
import { rethrowClientGone } from "./scim-clients/gone-repo.js";

const EVENTS_INSERT = preparedStatement("events_insert");

type Executor = Db | Transaction<Database>;

/**
 * The storage side of the event port: an OutboxBatch as SQL. What it writes, as entries of the WITH list of the single
 * statement that makes the change (`name as (<data-modifying statement>)`, comma-separated; names start with `ev_`),
 * so a write is one round trip and one implicit transaction: the rows are written only when `when` — a boolean SQL
 * expression over the other clauses, e.g. `exists (select 1 from u)` — holds, and only after those clauses ran (they
 * take the row lock first: per-key order stays commit order). Undefined when there is nothing to write.
 *
 * One statement whatever the number of events: the rows travel as one JSON parameter (JSON.stringify is native,
 * where pg serialises array parameters element by element in JavaScript).
 */
export function eventWrites(batch: OutboxBatch, when: RawBuilder<unknown>): RawBuilder<unknown> | undefined {
  if (batch.rows.length === 0) return undefined;
  const recorded = sql`ev_rows as (${guardedEventRows(batch, when)}), ev_events as (
        insert into directory_events (id, organization_id, directory_id, event, create_time, data)
        select r.id, ${batch.organizationId}::uuid, ${batch.directoryId}, r.event, ${batch.createdAt}::timestamptz, r.data
        from ev_rows r order by r.n
      )`;
  if (!batch.webhook) return recorded;
  return sql`${recorded}, ev_outbox as (
        insert into webhook_outbox (id, client_id, organization_id, event, ordering_key, body, created_at,
          traceparent)
        select r.id, ${batch.directoryId}, ${batch.organizationId}::uuid, r.event, r.ordering_key, r.body,
          ${batch.createdAt}::timestamptz, ${batch.traceparent}::text
        from ev_rows r order by r.n
      )`;
}

/** Writes `batch` on its own, in one statement of the caller's transaction. */
export async function writeEvents(db: Executor, batch: OutboxBatch): Promise<void> {
  const entries = eventWrites(batch, sql`true`);
  if (entries !== undefined) await EVENTS_INSERT.sql`with ${entries} select 1`.execute(db);
}

/** Records the events of a change in the transaction that makes it. */
export type RecordEvents = (client: EventClient, events: readonly DirectoryEvent[]) => Promise<void>;

/**
 * Runs `work` in a transaction whose events `record` writes, and announces them to `sink` once it committed. A write
 * that raced the deletion of its client fails with ClientGoneError.
 */
export async function transactionWithEvents<T>(
  db: Db,
  sink: EventSink,
  work: (trx: Transaction<Database>, record: RecordEvents) => Promise<T>,
): Promise<T> {
  const written: OutboxBatch[] = [];
  const result = await db
    .transaction()
    .execute((trx) =>
      work(trx, async (client, events) => {
        if (events.length === 0) return;
        const batch = sink.batch(client, events);
        await writeEvents(trx, batch);
        written.push(batch);
      }),
    )
    .catch(rethrowClientGone);
  for (const batch of written) sink.committed(batch);
  return result;
}
