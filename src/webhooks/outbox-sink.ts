import { type RawBuilder, sql, type Transaction } from "kysely";
import type { DirectoryEvent, EventSink } from "../directory/events.js";
import type { ScimClient } from "../directory/scim-clients/service.js";
import type { Clock } from "../platform/clock.js";
import { uuidv7 } from "../platform/ids.js";
import { PREPARED } from "../storage/database.js";
import type { Database } from "../storage/schema.js";

/** The webhook body, spec 2.8, in the spec's field order. */
export interface WebhookBody {
  readonly directory_id: string;
  readonly event: string;
  readonly tenant: string;
  readonly product: string;
  readonly data: Record<string, unknown>;
}

/**
 * The EventSink of the webhooks module: outbox rows written in the caller's transaction (DESIGN.md "Webhooks"),
 * so a committed change always yields its events and a rolled-back one never does.
 *
 * Decisions:
 * - A client without a webhook URL records nothing: events are not queued for an endpoint that may never exist,
 *   and configuring a URL later does not replay earlier changes.
 * - `directory_id`, `tenant` and `product` are snapshotted now, and the body is serialised once: the stored text
 *   is exactly what is signed and sent.
 * - Callers record after writing the resource (holding its row lock), so per-key insert order is commit order.
 */
export class OutboxEventSink implements EventSink {
  readonly #clock: Clock;
  constructor(clock: Clock) {
    this.#clock = clock;
  }

  async record(trx: Transaction<Database>, client: ScimClient, events: readonly DirectoryEvent[]): Promise<void> {
    const insert = this.inline(client, events, sql`true`);
    if (insert !== undefined) await insert.execute(trx);
  }

  /**
   * The same rows as `record`, in one INSERT … SELECT from one JSON parameter (whatever the number of events):
   * JSON.stringify is native, where pg serialises text[] parameters element by element in JavaScript.
   */
  inline(
    client: ScimClient,
    events: readonly DirectoryEvent[],
    when: RawBuilder<unknown>,
  ): RawBuilder<unknown> | undefined {
    if (events.length === 0 || client.webhookUrl === null) return undefined;
    const now = this.#clock.now();
    const rows = JSON.stringify(this.#rows(client, events, now));
    return sql`${sql.raw(PREPARED)}insert into webhook_outbox (id, client_id, organization_id, event, ordering_key, body, created_at)
      select v.id, ${client.clientId}, ${client.organizationId}::uuid, v.event, v.ordering_key, v.body, ${now}::timestamptz
      from rows from (json_to_recordset(${rows}::json) as (id uuid, event text, ordering_key text, body text))
        with ordinality as v(id, event, ordering_key, body, n)
      where ${when}
      order by v.n`;
  }

  #rows(client: ScimClient, events: readonly DirectoryEvent[], now: Date) {
    return events.map((e) => ({
      id: uuidv7(now.getTime()),
      event: e.kind,
      ordering_key: e.resourceId,
      body: JSON.stringify(webhookBody(client, e)),
    }));
  }
}

export function webhookBody(client: ScimClient, event: DirectoryEvent): WebhookBody {
  return {
    directory_id: client.clientId,
    event: event.kind,
    tenant: client.tenant,
    product: client.product,
    data: event.data,
  };
}
