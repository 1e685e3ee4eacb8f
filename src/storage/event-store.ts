import { type RawBuilder, sql, type Transaction } from "kysely";
import type { Db } from "./database.js";
import { batchRows, guardedEventClauses, mayBeHeldBehind, singleEventClauses, singleEventOf } from "./event-guard.js";
import { keyEventData, uuidv7Of } from "./key-event-sql.js";
import type { Clock } from "../platform/clock.js";
import { uuidv7 } from "../platform/ids.js";
import { currentTraceparent } from "../platform/trace-context.js";
import {
  type EventOrigin,
  type EventSink,
  type KeyEvents,
  type OutboxBatch,
  type OutboxRow,
  type PortEvent,
  webhookBodyHead,
  webhookBodyText,
} from "./event-port.js";
import { preparedStatement } from "./prepared.js";
import type { Database } from "./schema.js";

const EVENTS_INSERT = preparedStatement("events_insert");

type Executor = Db | Transaction<Database>;

/**
 * The storage side of the event port, and the one place every event is written: whatever made it (a SCIM request,
 * the admin API), an event becomes a `directory_events` row (the feed) and, when its connection has a webhook, a
 * `webhook_outbox` row (the delivery), here and nowhere else. Anything that must see every event before it is
 * published belongs in this function: a SCIM connection's batch passes its deprovisioning guard (event-guard.ts),
 * which may hold it.
 *
 * Returns the entries of the WITH list of the single statement that makes the change (`name as (<data-modifying
 * statement>)`, comma-separated; names start with `ev_`), so a write is one round trip and one implicit transaction:
 * the rows are written only when `when` — a boolean SQL expression over the other clauses, e.g.
 * `exists (select 1 from u)` — holds, and only after those clauses ran (they take the row lock first: per-key order
 * stays commit order). Undefined when there is nothing to write.
 *
 * One statement whatever the number of events: the rows travel as one JSON parameter (JSON.stringify is native,
 * where pg serialises array parameters element by element in JavaScript), except a lone event that stands for no
 * keys and deprovisions nothing — most writes — whose fields are parameters of their own (singleEventClauses): the
 * statement then parses no JSON. The rows of `KeyEvents` become one event per API key, read from `api_keys` by the
 * same statement (keyEventRows). `unheld`: see singleEventClauses (event-guard.ts); only a batch of one such event
 * uses it.
 */
export function publishEvents(
  batch: OutboxBatch,
  when: RawBuilder<unknown>,
  unheld = false,
): RawBuilder<unknown> | undefined {
  if (batch.rows.length === 0) return undefined;
  const keyed = batch.rows.some((r) => r.keyActor !== undefined || r.keyId !== undefined);
  // One event that stands for no keys and deprovisions nothing (most writes) travels as parameters.
  const single = singleEventOf(batch);
  // Only a batch with KeyEvents reads api_keys: the statements of every other change stay as they are.
  const source = keyed ? sql`ev_all r` : sql`ev_rows r`;
  const order = keyed ? sql`order by r.n, r.m` : single !== undefined ? sql`` : sql`order by r.n`;
  const from = sql`${source} ${order}`;
  const expanded = keyed ? sql`, ev_all as (${keyEventRows(batch)})` : sql``;
  // A SCIM connection's batch goes through its deprovisioning guard, which may hold it; admin events bypass it.
  const published =
    single !== undefined
      ? singleEventClauses(batch, single, when, unheld)
      : mayBeHeldBehind(batch)
        ? guardedEventClauses(batch, JSON.stringify(batch.rows), when)
        : sql`ev_rows as (select r.* from ${batchRows(sql`${JSON.stringify(batch.rows)}::json`)} where ${when})`;
  const recorded = sql`${published}${expanded}, ev_events as (
        insert into directory_events (id, organization_id, directory_id, source, event, create_time, data)
        select r.id, ${batch.organizationId}::uuid, ${batch.directoryId}::text, ${batch.source}, r.event,
          ${batch.createdAt}::timestamptz, r.data
        from ${source}${clientCheck(batch.directoryId)} ${order}
      )`;
  if (!batch.webhook) return recorded;
  return sql`${recorded}, ev_outbox as (
        insert into webhook_outbox (id, client_id, organization_id, event, ordering_key, body, created_at,
          traceparent)
        select r.id, ${batch.directoryId}, ${batch.organizationId}::uuid, r.event, r.ordering_key, r.body,
          ${batch.createdAt}::timestamptz, ${batch.traceparent}::text
        from ${from}
      )`;
}

/**
 * The feed's check of a connection's events (0045-statement-client-check): the connection's row, locked against its
 * deletion until the transaction ends, or the error of a missing connection (`directory_events_client_fkey`) —
 * once per statement, before its first event row, and not at all when it writes none (a held batch).
 */
const clientCheck = (directoryId: string | null) =>
  directoryId === null
    ? sql``
    : sql` where coalesce((select true from scim_clients c where c.client_id = ${directoryId}::text for key share),
          roster_client_gone(${directoryId}::text))`;

/**
 * The rows of `ev_rows` with the KeyEvents rows expanded into one event per API key, in key order: the keys that
 * follow the identity (organization's `keys_follow_identity`, docs/security.md) and changed state in this
 * transaction — suspended: not revoked, not expired; revoked: revoked by this transaction (`now()`) — or the one key
 * named. Each gets a UUIDv7 of the batch's time, its data (the admin API's fields of a key, without a secret) and
 * its webhook body completed from the head the batch carries.
 */
function keyEventRows(batch: OutboxBatch): RawBuilder<unknown> {
  const ms = batch.createdAt.getTime();
  const createdAt = JSON.stringify(batch.createdAt.toISOString());
  return sql`select r.n, 0::bigint as m, r.id, r.event, r.ordering_key, r.data, r.body from ev_rows r
        where r.key_actor is null and r.key_id is null
      union all
      select r.n, row_number() over (partition by r.n order by k.key_id) as m, k.id, r.event, k.key_id::text, k.data,
        r.body || k.data || ',"id":"' || k.id::text || '",' || ${`"created_at":${createdAt}}`}
      from ev_rows r cross join lateral (
        select k.key_id, ${uuidv7Of(sql`${ms}::bigint`, sql`g.u`)} as id, ${keyEventData("k", sql`r.event`)} as data
        -- g refers to k, so every key gets its own random part whatever join order the planner picks.
        from api_keys k, lateral (select gen_random_uuid() as u where k.key_id is not null) g
        where k.organization_id = ${batch.organizationId}::uuid and (
          (r.key_id is not null and k.key_id = r.key_id and k.revoke_time is not null)
          or (r.key_actor is not null and k.actor_identity_id = r.key_actor
            and exists (select 1 from organizations o where o.id = k.organization_id and o.keys_follow_identity)
            and case when r.event = 'api_key.suspended'
              then k.revoke_time is null and (k.expire_time is null or k.expire_time > ${batch.createdAt}::timestamptz)
              else k.revoke_time = now() and k.revoke_reason = 'ACTOR_DELETED' end))
      ) k
      where r.key_actor is not null or r.key_id is not null`;
}

/** Writes `batch` on its own, in one statement of the caller's transaction. */
export async function writeEvents(db: Executor, batch: OutboxBatch): Promise<void> {
  const entries = publishEvents(batch, sql`true`);
  if (entries !== undefined) await EVENTS_INSERT.sql`with ${entries} select 1`.execute(db);
}

/** Records the events of a change in the transaction that makes it. */
export type RecordEvents = (origin: EventOrigin, events: readonly PortEvent[]) => Promise<void>;

/**
 * Runs `work` in a transaction whose events `record` writes, and announces them to `sink` once it committed.
 */
export async function transactionWithEvents<T>(
  db: Db,
  sink: EventSink,
  work: (trx: Transaction<Database>, record: RecordEvents) => Promise<T>,
): Promise<T> {
  const written: OutboxBatch[] = [];
  const result = await db.transaction().execute((trx) =>
    work(trx, async (origin, events) => {
      if (events.length === 0) return;
      const batch = sink.batch(origin, events);
      await writeEvents(trx, batch);
      written.push(batch);
    }),
  );
  for (const batch of written) sink.committed(batch);
  return result;
}

const isKeyEvents = (e: PortEvent): e is KeyEvents => !("data" in e);

/**
 * The EventSink of production: ids (UUIDv7) and the time from the clock, the webhook body serialised once (the
 * stored text is exactly what is signed and sent; its `data` is the same text as the event's), the connection's
 * `directory_id`, `tenant` and `product` snapshotted now. A connection without a webhook URL gets no outbox rows
 * (configuring a URL later does not replay earlier changes); its events are in the feed all the same.
 */
export class EventBatcher implements EventSink {
  readonly #clock: Clock;
  constructor(clock: Clock) {
    this.#clock = clock;
  }

  batch(origin: EventOrigin, events: readonly PortEvent[]): OutboxBatch {
    const now = this.#clock.now();
    const webhook = origin.webhookUrl !== null && origin.clientId !== null;
    const createdAt = now.toISOString();
    const rows = events.map((e): OutboxRow => {
      const id = uuidv7(now.getTime());
      if (isKeyEvents(e)) {
        const head = webhook ? webhookBodyHead(origin, e.kind) : null;
        const target = e.actorId !== undefined ? { keyActor: e.actorId } : { keyId: e.keyId ?? "" };
        return { id, event: e.kind, orderingKey: "", data: "", body: head, ...target };
      }
      const data = JSON.stringify(e.data);
      const body = webhook ? webhookBodyText(origin, e.kind, data, id, createdAt) : null;
      return { id, event: e.kind, orderingKey: e.resourceId, data, body };
    });
    return {
      organizationId: origin.organizationId,
      directoryId: origin.clientId,
      source: origin.source ?? (origin.clientId === null ? "admin" : "scim"),
      createdAt: now,
      webhook,
      rows,
      traceparent: currentTraceparent(),
    };
  }

  /** Nothing to do here: the composition root wakes the dispatcher after each commit (see afterCommit). */
  committed(): void {}

  /** Writes `events` in `trx` as a change of `origin` would: for tools and tests that make events directly. */
  async record(trx: Executor, origin: EventOrigin, events: readonly PortEvent[]): Promise<void> {
    await writeEvents(trx, this.batch(origin, events));
  }
}
