import { type RawBuilder, sql, type Transaction } from "kysely";
import type { Db } from "../../storage/database.js";
import type { Database } from "../../storage/schema.js";
import { StoredDocument } from "./stored-document.js";
import type { Membership, StoredUser } from "./types.js";

/** Kysely only: every query filters on the organization and is served by an index of 0001-foundation. */
export type Executor = Db | Transaction<Database>;

/**
 * The memberships `m` joined to their groups `g` as rows, `[[id, displayName], …]` ordered by displayName (null when
 * there are none), in one json column that pg decodes with JSON.parse into arrays. Built with string_agg (json_agg of
 * json_build_object cost PostgreSQL twice as much); a two-dimensional text array costs Node more to parse than
 * JSON.parse does (docs/performance.md).
 */
export const MEMBERSHIPS = sql`('[' || string_agg('["' || g.id::text || '",' || to_json(g.display_name)::text || ']', ','
    order by g.display_name, g.id) || ']')::json`;

/**
 * A user's direct memberships (see MEMBERSHIPS), in one correlated subquery (no N+1): group_user_members_identity_idx,
 * then the group pkey.
 */
const membershipsOf = (table: string) =>
  sql<[string, string][]>`(select coalesce(${MEMBERSHIPS}, '[]')
    from group_user_members m join directory_groups g on g.id = m.group_id
    where m.identity_id = ${sql.ref(`${table}.id`)} and g.organization_id = ${sql.ref(`${table}.organization_id`)})`;

/**
 * The manager's displayName (else userName), resolved only inside the same organization. `manager_id` is the
 * manager's value when it is a UUID (written with the document): one lookup of the primary key. The organization is
 * compared on the row found, not in the lookup's condition: with it there, a plan cached while the table was small
 * (the first writes of a new directory) could read the organization's every user through another index of
 * `organization_id` and filter them by id, on every write until the next ANALYZE.
 */
const managerOf = (table: string) =>
  sql<string | null>`(select case when mi.organization_id = ${sql.ref(`${table}.organization_id`)}
    then coalesce(mi.scim ->> 'displayName', mi.user_name) end
    from identities mi where mi.id = ${sql.ref(`${table}.manager_id`)})`;

/** A timestamp as UTC text: PostgreSQL's own output function, far cheaper than to_char. */
const utcText = (column: string) => sql<string>`(${sql.ref(column)} at time zone 'UTC')::text`;

/** A user row as read for a StoredUser: the document as text, parsed only by who reads its values. */
export interface UserRow {
  id: string;
  /** The row version (see updateUserAt). */
  version: string;
  document: string;
  /** See StoredDocument.serverKeys. */
  owned: boolean;
  /** `YYYY-MM-DD HH:MI:SS[.ffffff]` in UTC: timestamp output under DateStyle ISO (set on every session). */
  created: string;
  updated: string;
  manager_display_name: string | null;
  /** Only when memberships were read: `[groupId, displayName]` pairs (see MEMBERSHIPS). */
  groups?: [string, string][];
}

/** The UserRow columns of `table` (without `groups`), for Kysely selects. */
export const recordColumns = (table: string) => [
  sql.ref<string>(`${table}.id`).as("id"),
  sql<string>`${sql.ref(`${table}.version`)}::text`.as("version"),
  sql<string>`${sql.ref(`${table}.scim`)}::text`.as("document"),
  sql<boolean>`${sql.ref(`${table}.scim`)} ?| array['id', 'meta', 'groups', 'password']`.as("owned"),
  utcText(`${table}.created_at`).as("created"),
  utcText(`${table}.updated_at`).as("updated"),
  managerOf(table).as("manager_display_name"),
];

/**
 * A parameterless SQL fragment compiled to text once per key: building and compiling the column expressions on every
 * request cost more Roster CPU than the rest of the statement.
 */
const constantTexts = new Map<string, RawBuilder<unknown>>();
function constantSql(db: Executor, key: string, build: () => RawBuilder<unknown>): RawBuilder<unknown> {
  let text = constantTexts.get(key);
  if (text === undefined) {
    const compiled = build().compile(db);
    if (compiled.parameters.length > 0) throw new Error(`${key}: a constant fragment must not bind parameters`);
    text = sql.raw(compiled.sql);
    constantTexts.set(key, text);
  }
  return text;
}

/** The UserRow columns of `table`, memberships included when `groups`, as constant SQL text. */
export const columnsOf = (db: Executor, table: string, groups: boolean): RawBuilder<unknown> =>
  constantSql(db, `record:${table}:${groups}`, () =>
    sql.join(groups ? [...recordColumns(table), membershipsOf(table).as("groups")] : recordColumns(table)),
  );

/**
 * utcText's value as RFC 3339 with milliseconds, exactly what Date#toISOString writes for the same instant (a Date
 * keeps milliseconds: the microseconds are cut, not rounded, as pg's Date parser does).
 */
export function isoFromUtcText(text: string): string {
  // The shape, by position (a regex per timestamp was a visible share of a list page's CPU).
  const n = text.length;
  if (n < 19 || n > 26 || text[4] !== "-" || text[10] !== " " || text[13] !== ":" || (n > 19 && text[19] !== ".")) {
    throw new Error(`unexpected timestamp text from PostgreSQL: ${text}`);
  }
  const millis = text.length > 20 ? text.slice(20, 23).padEnd(3, "0") : "000";
  return `${text.slice(0, 10)}T${text.slice(11, 19)}.${millis}Z`;
}

const membershipOf = ([groupId, displayName]: [string, string]): Membership => ({ groupId, displayName });

export function toStoredUser(row: UserRow): StoredUser {
  return {
    id: row.id,
    version: row.version,
    document: new StoredDocument(row.document, row.owned),
    createdAt: isoFromUtcText(row.created),
    updatedAt: isoFromUtcText(row.updated),
    groups: row.groups?.map(membershipOf),
    managerDisplayName: row.manager_display_name,
  };
}
