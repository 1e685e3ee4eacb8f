import type { Transaction } from "kysely";
import type { DirectoryEvent, EventSink } from "../directory/events.js";
import type { ScimClient } from "../directory/scim-clients/service.js";
import type { Clock } from "../platform/clock.js";
import { uuidv7 } from "../platform/ids.js";
import type { Database } from "../storage/schema.js";

/** Rows per INSERT: 8 parameters each stays far below PostgreSQL's 65 535 bind parameters. */
const INSERT_CHUNK = 1000;

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
    if (events.length === 0 || client.webhookUrl === null) return;
    const now = this.#clock.now();
    const rows = events.map((e) => ({
      id: uuidv7(now.getTime()),
      client_id: client.clientId,
      organization_id: client.organizationId,
      event: e.kind,
      ordering_key: e.resourceId,
      body: JSON.stringify(webhookBody(client, e)),
      created_at: now,
    }));
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
      await trx
        .insertInto("webhook_outbox")
        .values(rows.slice(i, i + INSERT_CHUNK))
        .execute();
    }
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
