/**
 * The event port, as plain data: what a change hands to storage so that its events are written in the change's own
 * statement or transaction (event-store.ts), and what storage hands back once committed. No part of it knows SCIM,
 * the admin API or webhooks' delivery: an event is a kind, the resource whose order it keeps, and its data.
 */

/** What made a change: a SCIM client's request, or the admin API (a person or a tool holding an admin token). */
export type EventSource = "scim" | "admin";

/** Who an event belongs to. A SCIM client (a ScimClient) is one as it is: its requests are the source `scim`. */
export interface EventOrigin {
  readonly organizationId: string;
  /** The connection the event concerns (the feed's `directory_id`); null for an event of the organization alone. */
  readonly clientId: string | null;
  readonly tenant: string;
  readonly product: string;
  /** The connection's webhook URL: when set, each event also gets an outbox row to deliver. */
  readonly webhookUrl: string | null;
  /** Default `scim` when `clientId` is set, else `admin`. */
  readonly source?: EventSource;
}

/** One event of a change: its kind, its ordering key (events of one key go out in commit order) and its data. */
export interface NewEvent {
  readonly kind: string;
  readonly resourceId: string;
  /** The webhook body's `data`. */
  readonly data: Record<string, unknown>;
}

/**
 * The events of the API keys a change affects, which storage reads in the writing statement itself (a key's
 * suspension and revocation happen in the database, in the transaction of the change: docs/security.md): one
 * `api_key.suspended` or `api_key.revoked` event per key, keyed by the key's id.
 * - `actorId`: the keys that follow this identity (an identity deactivated or deleted);
 * - `keyId`: that one key (revoked through the admin API).
 */
export interface KeyEvents {
  readonly kind: "api_key.suspended" | "api_key.revoked";
  readonly actorId?: string;
  readonly keyId?: string;
}

export type PortEvent = NewEvent | KeyEvents;

/** One event as written: a row of the events feed and, for a connection with a webhook URL, of the outbox. */
export interface OutboxRow {
  /** The event id (UUIDv7): the feed's id, the outbox id and the `webhook-id` header. */
  readonly id: string;
  readonly event: string;
  readonly orderingKey: string;
  /** NewEvent.data as JSON text; "" for a KeyEvents row (storage writes one row per key instead). */
  readonly data: string;
  /**
   * The webhook body as signed and sent; null when no outbox row is written. For a KeyEvents row, the body's
   * beginning up to `"data":`, which storage completes per key.
   */
  readonly body: string | null;
  /** KeyEvents only: the identity whose keys, or the key, the row stands for. */
  readonly keyActor?: string;
  readonly keyId?: string;
}

/** The events of one change, as plain data: the change's own statement or transaction writes them. */
export interface OutboxBatch {
  readonly organizationId: string;
  /** The connection the events concern; null for events of the organization alone (no webhook). */
  readonly directoryId: string | null;
  readonly source: EventSource;
  readonly createdAt: Date;
  /** Whether outbox rows are written too (the connection has a webhook URL); feed rows always are. */
  readonly webhook: boolean;
  readonly rows: readonly OutboxRow[];
  /** The W3C traceparent of the request that made the change, or null: the delivery's span links to it. */
  readonly traceparent: string | null;
}

/**
 * The port a service writes its events through: `batch` turns a change's events into an OutboxBatch, the change's
 * repository writes it in the change's transaction (a committed change always has its events, a rolled-back one
 * never does), and `committed` is called once it committed.
 */
export interface EventSink {
  batch(origin: EventOrigin, events: readonly PortEvent[]): OutboxBatch;
  /** Called by the code that wrote `batch`, after its transaction committed, never for a rolled-back one. */
  committed(batch: OutboxBatch): void;
}

/**
 * Whether `row` is a deprovisioning change as the deprovisioning guard counts one (`roster_route_events`,
 * 0040-deactivations-counted): a `user.deleted`, or the key suspension that comes with a deactivation — the change
 * that makes an active user inactive — in the same batch (a KeyEvents row of `api_key.suspended` for the user). An
 * update of a user who was already inactive is none.
 */
export const mayDeprovision = (row: OutboxRow): boolean =>
  row.event === "user.deleted" || (row.event === "api_key.suspended" && row.keyActor !== undefined);

/** Whether a row of `batch` is a deprovisioning change: only such a batch is counted, and only it can trip the guard. */
export const batchMayDeprovision = (batch: OutboxBatch): boolean => batch.rows.some(mayDeprovision);

/**
 * Batches whose writing statement showed they cannot be the write that tripped their connection's guard without
 * announcing it (claimSparedColumn, event-guard.ts): the trip was already announced, or the batch flowed. The
 * guard's post-commit claim of the warning (one WARN line per trip) skips them; any other batch is claimed.
 */
const spared = new WeakSet<OutboxBatch>();
export const markClaimSpared = (batch: OutboxBatch): void => {
  spared.add(batch);
};
export const claimSpared = (batch: OutboxBatch): boolean => spared.has(batch);

/** `sink`, with `then` called after each commit as well (the composition root wakes the webhook dispatcher so). */
export function afterCommit(sink: EventSink, then: (batch: OutboxBatch) => void): EventSink {
  return {
    batch: (origin, events) => sink.batch(origin, events),
    committed(batch) {
      sink.committed(batch);
      then(batch);
    },
  };
}

/** The envelope a body starts with: the documented fields in their order, up to `"data":`. */
export function webhookBodyHead(origin: Pick<EventOrigin, "clientId" | "tenant" | "product">, event: string): string {
  const head = JSON.stringify({
    directory_id: origin.clientId,
    event,
    tenant: origin.tenant,
    product: origin.product,
  });
  return `${head.slice(0, -1)},"data":`;
}

/**
 * The webhook body: the documented fields in their order, then the event's identity — `id` (the `webhook-id` header and
 * the feed's event id) and `created_at` (RFC 3339). `data` is spliced in as the text the event stores.
 */
export function webhookBodyText(
  origin: Pick<EventOrigin, "clientId" | "tenant" | "product">,
  event: string,
  data: string,
  id: string,
  createdAt: string,
): string {
  return `${webhookBodyHead(origin, event)}${data},"id":${JSON.stringify(id)},"created_at":${JSON.stringify(createdAt)}}`;
}
