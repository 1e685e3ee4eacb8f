import type { DirectoryEventKind } from "./event-kinds.js";

export { DIRECTORY_EVENT_KINDS, type DirectoryEventKind } from "./event-kinds.js";

export interface DirectoryEvent {
  readonly kind: DirectoryEventKind;
  /**
   * Ordering key: events with the same key are delivered in commit order. The user id for user.*, the group id
   * for group.* (membership events included).
   */
  readonly resourceId: string;
  /** The webhook body's `data`: build it with the helpers below. */
  readonly data: Record<string, unknown>;
}

/** One event as stored: a row of the events feed and, for a client with a webhook URL, of the webhook outbox. */
export interface OutboxRow {
  /** The event id (UUIDv7): the feed's id, the outbox id and the `webhook-id` header. */
  readonly id: string;
  readonly event: DirectoryEventKind;
  /** DirectoryEvent.resourceId. */
  readonly orderingKey: string;
  /** DirectoryEvent.data as JSON text. */
  readonly data: string;
  /** The webhook body as signed and sent; null when no outbox row is written. */
  readonly body: string | null;
}

/** The events of one change, as plain data: the change's own statement or transaction writes them. */
export interface OutboxBatch {
  readonly organizationId: string;
  /** The SCIM client whose request made the change. */
  readonly directoryId: string;
  readonly createdAt: Date;
  /** Whether outbox rows are written too (the client has a webhook URL); feed rows always are. */
  readonly webhook: boolean;
  readonly rows: readonly OutboxRow[];
  /**
   * The W3C traceparent of the request that made the change, or null when nothing is traced: the webhook delivery's
   * span links to it.
   */
  readonly traceparent: string | null;
}

/** What an event records of the SCIM client whose request made the change (a ScimClient is one). */
export interface EventClient {
  readonly organizationId: string;
  readonly clientId: string;
  readonly tenant: string;
  readonly product: string;
  /** Null: the client has no webhook, its events go to the feed only. */
  readonly webhookUrl: string | null;
}

/**
 * The event port. Directory services turn the events of a change into an OutboxBatch, have their repository write
 * it inside the change's transaction (a committed change always yields its events and a rolled-back one never
 * does), and announce it once committed. The webhooks module implements it.
 */
export interface EventSink {
  batch(client: EventClient, events: readonly DirectoryEvent[]): OutboxBatch;
  /** Called by the code that wrote `batch`, after its transaction committed, never for a rolled-back one. */
  committed(batch: OutboxBatch): void;
}

/** `sink`, with `then` called after each commit as well (the composition root wakes the webhook dispatcher so). */
export function afterCommit(sink: EventSink, then: (batch: OutboxBatch) => void): EventSink {
  return {
    batch: (client, events) => sink.batch(client, events),
    committed(batch) {
      sink.committed(batch);
      then(batch);
    },
  };
}

type Json = Record<string, unknown>;

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/**
 * User `data` (docs/webhooks.md): `email` is the primary email, else the first, else userName when it looks
 * like an email. `raw` is the SCIM user as stored: callers pass it without the password.
 */
export function userEventData(user: Json): Json {
  const name = (typeof user.name === "object" && user.name !== null ? user.name : {}) as Json;
  const emails = Array.isArray(user.emails) ? (user.emails as Json[]) : [];
  const primary = emails.find((e) => e.primary === true) ?? emails[0];
  const userName = str(user.userName);
  const { password: _password, ...raw } = user;
  return {
    id: str(user.id),
    first_name: str(name.givenName),
    last_name: str(name.familyName),
    email: primary !== undefined ? str(primary.value) : userName.includes("@") ? userName : "",
    active: user.active !== false,
    raw,
  };
}

/** Group `data`: `{id, name, raw}`; `raw` is the SCIM group as stored (members may be left out of large groups). */
export function groupEventData(group: Json): Json {
  return { id: str(group.id), name: str(group.displayName), raw: group };
}

/** Membership events: the user's data plus `group: {id, name, raw}`. */
export function membershipEventData(user: Json, group: Json): Json {
  return { ...userEventData(user), group: groupEventData(group) };
}
