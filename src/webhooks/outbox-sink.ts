import type { DirectoryEvent, EventClient, EventSink, OutboxBatch } from "../directory/events.js";
import { writeEvents } from "../directory/events-repo.js";
import { currentTraceparent } from "../platform/trace-context.js";
import type { Clock } from "../platform/clock.js";
import { uuidv7 } from "../platform/ids.js";

/**
 * The EventSink of the webhooks module: every change becomes a `directory_events` row (the events feed,
 * docs/events.md), and, for a client with a webhook URL, an outbox row to deliver — both written by the caller's
 * statement or transaction (directory/events-repo.ts), so a committed change always yields its events and a
 * rolled-back one never does.
 *
 * Decisions:
 * - A client without a webhook URL gets no outbox rows (configuring a URL later does not replay earlier changes);
 *   its events are in the feed all the same.
 * - `directory_id`, `tenant` and `product` are snapshotted now, and the body is serialised once: the stored text
 *   is exactly what is signed and sent. Its `data` is the same text as the event's.
 * - Callers write the batch after writing the resource (holding its row lock), so per-key insert order is commit
 *   order.
 */
export class OutboxEventSink implements EventSink {
  readonly #clock: Clock;
  constructor(clock: Clock) {
    this.#clock = clock;
  }

  batch(client: EventClient, events: readonly DirectoryEvent[]): OutboxBatch {
    const now = this.#clock.now();
    const webhook = client.webhookUrl !== null;
    const createdAt = now.toISOString();
    const rows = events.map((e) => {
      const id = uuidv7(now.getTime());
      const data = JSON.stringify(e.data);
      const body = webhook ? webhookBodyText(client, e.kind, data, id, createdAt) : null;
      return { id, event: e.kind, orderingKey: e.resourceId, data, body };
    });
    return {
      organizationId: client.organizationId,
      directoryId: client.clientId,
      createdAt: now,
      webhook,
      rows,
      traceparent: currentTraceparent(),
    };
  }

  /** Nothing to do here: the composition root wakes the dispatcher after each commit (see afterCommit). */
  committed(): void {}

  /** Writes `events` in `trx` as a change through `client` would: for tools and tests that make events directly. */
  async record(trx: EventWriter, client: EventClient, events: readonly DirectoryEvent[]): Promise<void> {
    await writeEvents(trx, this.batch(client, events));
  }
}

/** Where events-repo writes a batch: the pool or the caller's transaction. */
type EventWriter = Parameters<typeof writeEvents>[0];

/**
 * The webhook body: the documented fields in their order, then the event's identity — `id` (the `webhook-id` header and
 * the feed's event id) and `created_at` (RFC 3339). `data` is spliced in as the text the event stores.
 */
export function webhookBodyText(
  client: EventClient,
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
