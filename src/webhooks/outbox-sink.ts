import { type RawBuilder, sql, type Transaction } from "kysely";
import type { DirectoryEvent, EventSink } from "../directory/events.js";
import type { ScimClient } from "../directory/scim-clients/service.js";
import { currentTraceparent } from "../platform/trace-context.js";
import type { Clock } from "../platform/clock.js";
import { uuidv7 } from "../platform/ids.js";
import { PREPARED } from "../storage/database.js";
import type { Database } from "../storage/schema.js";

/**
 * The EventSink of the webhooks module: every change becomes a `directory_events` row (the events feed,
 * docs/events.md), and, for a client with a webhook URL, an outbox row to deliver — both written by the caller's
 * statement or transaction, so a committed change always yields its events and a rolled-back one never does.
 *
 * Decisions:
 * - A client without a webhook URL gets no outbox rows (configuring a URL later does not replay earlier changes);
 *   its events are in the feed all the same.
 * - `directory_id`, `tenant` and `product` are snapshotted now, and the body is serialised once: the stored text
 *   is exactly what is signed and sent. Its `data` is the same text as the event's.
 * - Callers record after writing the resource (holding its row lock), so per-key insert order is commit order.
 * - One statement whatever the number of events: the rows travel as one JSON parameter (JSON.stringify is native,
 *   where pg serialises array parameters element by element in JavaScript).
 */
export class OutboxEventSink implements EventSink {
  readonly #clock: Clock;
  constructor(clock: Clock) {
    this.#clock = clock;
  }

  async record(trx: Transaction<Database>, client: ScimClient, events: readonly DirectoryEvent[]): Promise<void> {
    const entries = this.inline(client, events, sql`true`);
    if (entries !== undefined) await sql`${sql.raw(PREPARED)}with ${entries} select 1`.execute(trx);
  }

  inline(
    client: ScimClient,
    events: readonly DirectoryEvent[],
    when: RawBuilder<unknown>,
  ): RawBuilder<unknown> | undefined {
    if (events.length === 0) return undefined;
    const now = this.#clock.now();
    const hooked = client.webhookUrl !== null;
    const rows = JSON.stringify(this.#rows(client, events, now, hooked));
    const recorded = sql`ev_rows as (
        select v.* from rows from (json_to_recordset(${rows}::json)
          as (id uuid, event text, ordering_key text, data text, body text))
          with ordinality as v(id, event, ordering_key, data, body, n)
        where ${when}
      ), ev_events as (
        insert into directory_events (id, organization_id, directory_id, event, create_time, data)
        select r.id, ${client.organizationId}::uuid, ${client.clientId}, r.event, ${now}::timestamptz, r.data
        from ev_rows r order by r.n
      )`;
    if (!hooked) return recorded;
    return sql`${recorded}, ev_outbox as (
        insert into webhook_outbox (id, client_id, organization_id, event, ordering_key, body, created_at,
          traceparent)
        select r.id, ${client.clientId}, ${client.organizationId}::uuid, r.event, r.ordering_key, r.body,
          ${now}::timestamptz, ${currentTraceparent()}::text
        from ev_rows r order by r.n
      )`;
  }

  #rows(client: ScimClient, events: readonly DirectoryEvent[], now: Date, hooked: boolean) {
    const createdAt = now.toISOString();
    return events.map((e) => {
      const id = uuidv7(now.getTime());
      const data = JSON.stringify(e.data);
      return {
        id,
        event: e.kind,
        ordering_key: e.resourceId,
        data,
        body: hooked ? webhookBodyText(client, e.kind, data, id, createdAt) : null,
      };
    });
  }
}

/**
 * The webhook body: spec 2.8's fields in its order, then the event's identity — `id` (the `webhook-id` header and
 * the feed's event id) and `created_at` (RFC 3339). `data` is spliced in as the text the event stores.
 */
export function webhookBodyText(
  client: ScimClient,
  event: string,
  data: string,
  id: string,
  createdAt: string,
): string {
  const head = JSON.stringify({
    directory_id: client.clientId,
    event,
    tenant: client.tenant,
    product: client.product,
  });
  return `${head.slice(0, -1)},"data":${data},"id":${JSON.stringify(id)},"created_at":${JSON.stringify(createdAt)}}`;
}
