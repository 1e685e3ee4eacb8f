import type { KeyEvents } from "../storage/event-port.js";
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

/**
 * The event port (storage/event-port.ts): services hand it the events of a change as plain values, their repository
 * writes them in the change's transaction through storage (storage/event-store.ts), and they announce them once
 * committed.
 */
export type { EventOrigin, EventSink, KeyEvents, OutboxBatch, OutboxRow, PortEvent } from "../storage/event-port.js";
export { afterCommit, batchMayDeprovision, claimSpared } from "../storage/event-port.js";

/** What an event records of the SCIM client whose request made the change (a ScimClient is one). */
export interface EventClient {
  readonly organizationId: string;
  readonly clientId: string;
  readonly tenant: string;
  readonly product: string;
  /** Null: the client has no webhook, its events go to the feed only. */
  readonly webhookUrl: string | null;
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

/**
 * The API key events of a change to user `id` (docs/security.md, "The deprovisioning guarantee"): going inactive
 * suspends the keys that follow the user (`api_key.suspended`), its deletion revokes them (`api_key.revoked`).
 * Storage finds the keys in the writing statement, so an event names exactly the keys the change affected.
 * `before` is undefined for a new user (keys may be made for an id before the user exists).
 */
export function keyEventsOf(id: string, before: Json | undefined, after: Json | "deleted"): KeyEvents[] {
  if (after === "deleted") return [{ kind: "api_key.revoked", actorId: id }];
  const wasActive = before === undefined || before.active !== false;
  return wasActive && after.active === false ? [{ kind: "api_key.suspended", actorId: id }] : [];
}
