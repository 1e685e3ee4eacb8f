import type { RawBuilder, Transaction } from "kysely";
import type { Database } from "../storage/schema.js";
import type { DirectoryEventKind } from "./event-kinds.js";
import type { ScimClient } from "./scim-clients/types.js";

export { DIRECTORY_EVENT_KINDS, type DirectoryEventKind } from "./event-kinds.js";

export interface DirectoryEvent {
  readonly kind: DirectoryEventKind;
  /**
   * Ordering key: events with the same key are delivered in commit order. The user id for user.*, the group id
   * for group.* (membership events included).
   */
  readonly resourceId: string;
  /** The webhook body's `data` (spec 2.8): build it with the helpers below. */
  readonly data: Record<string, unknown>;
}

/**
 * Where directory services record events: inside the transaction of the change they describe, so a committed
 * change always yields its events and a rolled-back one never does. The webhooks module implements it (outbox).
 */
export interface EventSink {
  record(trx: Transaction<Database>, client: ScimClient, events: readonly DirectoryEvent[]): Promise<void>;
  /**
   * What `record` writes, as entries of the WITH list of the single statement that makes the change (`name as
   * (<data-modifying statement>)`, comma-separated; names start with `ev_`), so a write is one round trip and one
   * implicit transaction: the rows are written only when `when` — a boolean SQL expression over the other clauses,
   * e.g. `exists (select 1 from u)` — holds, and only after those clauses ran (they take the row lock first: per-key
   * order stays commit order). Undefined when nothing is to be written.
   */
  inline(
    client: ScimClient,
    events: readonly DirectoryEvent[],
    when: RawBuilder<unknown>,
  ): RawBuilder<unknown> | undefined;
}

/** For code paths and tests that deliberately emit nothing. */
export const discardEvents: EventSink = { record: async () => {}, inline: () => undefined };

type Json = Record<string, unknown>;

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/**
 * User `data` (spec 2.8, DESIGN.md): `email` is the primary email, else the first, else userName when it looks
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
