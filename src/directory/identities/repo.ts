import { type RawBuilder, sql, type Transaction } from "kysely";
import type { Db } from "../../storage/database.js";
import { preparedStatement } from "../../storage/prepared.js";
import type { Database } from "../../storage/schema.js";
import type { OutboxBatch } from "../events.js";
import { claimSparedColumn, eventWrites, heldColumn, markClaimSpared } from "../events-repo.js";
import { rethrowClientGone } from "../scim-clients/gone-repo.js";
import { digestOf, IDENTITY_EXTENSION_INDEX, replaceIndexedValues } from "../extension-index-repo.js";
import { ENTERPRISE_KEY, type Identifier } from "./document.js";
import type { ExtensionValue } from "./extension-values.js";
import { columnsOf, type Executor, type UserRow } from "./repo-columns.js";

const USER_READ = preparedStatement("user_read");
const USER_UPDATE_GUARDED = preparedStatement("user_update_guarded");
const USER_CREATE = preparedStatement("user_create");

/**
 * The writes of users. A create and an optimistic update are one statement each (one round trip, one implicit
 * transaction, synchronously committed) that also writes their events (events-repo eventWrites); the others run in
 * the caller's transaction. A write that raced the deletion of its client fails with ClientGoneError.
 */

export const IDENTIFIERS_KEY = "identity_identifiers_value_key";
/** The partial unique index that enforces `uniqueness: "server"` of extension attributes (0010-scim-extensions). */
export const EXTENSION_UNIQUE_KEY = "identity_extension_values_unique_key";

export interface IdentityValues {
  user_name: string;
  external_id: string | null;
  employee_number: string | null;
  active: boolean;
  /** The enterprise manager's value when it is a UUID (document.ts columnsOf): the key of manager lookups. */
  manager_id: string | null;
  scim: Record<string, unknown>;
  traits: Record<string, unknown>;
}

const HOUR_MS = 3_600_000;

/**
 * `modified_hour` of a row written at `now`: `updated_at` to the hour, which the index of `meta.lastModified` holds
 * (0043-hot-user-updates). Every write of `updated_at` writes it too: computed here, not by PostgreSQL, since a
 * stored generated column is parsed and planned again by every statement that writes the row (0044).
 */
export const hourOf = (now: Date): Date => new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS);

/** hourOf in SQL, for the `meta.lastModified` comparisons that the index of `modified_hour` serves (repo-search.ts). */
export const hourOfSql = (at: RawBuilder<unknown>): RawBuilder<unknown> =>
  sql`date_bin('1 hour', ${at}, timestamptz '2000-01-01 00:00:00+00')`;

/** The row a replace or patch starts from, read without a lock; see updateUserAt. */
export async function readUser(db: Executor, orgId: string, id: string, groups: boolean): Promise<UserRow | undefined> {
  const { rows } = await USER_READ.sql<UserRow>`select ${columnsOf(db, "i", groups)}
    from identities as i where i.organization_id = ${orgId} and i.id = ${id}`.execute(db);
  return rows[0];
}

export interface LockedRow extends UserRow {
  password_hash: string | null;
}

/** The row a replace or patch starts from, locked until the transaction ends (no lost updates). */
export async function lockUser(
  trx: Transaction<Database>,
  orgId: string,
  id: string,
  groups: boolean,
): Promise<LockedRow | undefined> {
  const { rows } = await sql<LockedRow>`select ${columnsOf(trx, "i", groups)}, i.password_hash
    from identities as i where i.organization_id = ${orgId} and i.id = ${id} for update`.execute(trx);
  return rows[0];
}

/** The clauses that write `events` once `u` wrote its row. */
const eventsClause = (events: OutboxBatch | undefined, unheld = false) => {
  const clause = events === undefined ? undefined : eventWrites(events, sql`exists (select 1 from u)`, unheld);
  return clause === undefined ? sql`` : sql`, ${clause}`;
};

/**
 * Optimistic update in one statement: the row is written only if its version is still `version`, and `events` only if
 * it was. Undefined when the row changed or vanished since it was read; the caller then starts over under a row lock.
 * Identifiers are not touched: only for writes that keep them. `wasActive`, the `active` of the row at `version`:
 * when it is the value written, the statement leaves the column out, and the trigger that counts a change of it
 * (0035-active-user-counts) is not even evaluated. `unheld`: the caller knows the user has no held event (its own
 * last write of the row, at `version`, flowed), so the statement does not test for one (singleEventClauses). The row
 * has `flowed`: whether the events are known to have flowed — false when they were held or when the statement
 * could not tell, so that the next write tests again.
 */
export async function updateUserAt(
  db: Db,
  orgId: string,
  id: string,
  version: string,
  values: IdentityValues & { now: Date },
  groups: boolean,
  events: OutboxBatch | undefined,
  wasActive?: boolean,
  unheld = false,
): Promise<(UserRow & { flowed: boolean }) | undefined> {
  const active = values.active === wasActive ? sql`` : sql`active = ${values.active}, `;
  const { rows } = await USER_UPDATE_GUARDED.sql<UserRow & { claim_spared?: boolean; held?: boolean }>`
    with u as (
      update identities set user_name = ${values.user_name}, external_id = ${values.external_id},
        employee_number = ${values.employee_number}, ${active}manager_id = ${values.manager_id}::uuid,
        scim = ${JSON.stringify(values.scim)}::jsonb, traits = ${JSON.stringify(values.traits)}::jsonb,
        updated_at = ${values.now}, modified_hour = ${hourOf(values.now)}, version = version + 1
      where organization_id = ${orgId} and id = ${id} and version = ${version}::bigint
      returning ${columnsOf(db, "identities", groups)}
    )${eventsClause(events, unheld)}
    select u.*${claimSparedColumn(events)}${heldColumn(events, unheld)} from u`
    .execute(db)
    .catch(rethrowClientGone);
  const row = rows[0];
  if (row === undefined) return undefined;
  // A deactivation that flowed, or met an announced hold, spares the guard's claim its round trip after commit.
  if (row.claim_spared === true && events !== undefined) markClaimSpared(events);
  return { ...row, flowed: row.held === false };
}

/**
 * A new identity, its identifiers, its extension index rows and `events` in one statement. A taken identifier fails
 * the whole statement (IDENTIFIERS_KEY). A new identity has no held event to wait behind, so its event is written
 * without the test for one (singleEventClauses), and the row has `flowed` as updateUserAt's has.
 */
export async function createUser(
  db: Db,
  row: IdentityValues & { id: string; organization_id: string; password_hash: string | null; now: Date },
  identifiers: readonly Identifier[],
  events: OutboxBatch,
  extensionValues: readonly ExtensionValue[] = [],
): Promise<UserRow & { flowed: boolean }> {
  const { rows } = await USER_CREATE.sql<UserRow & { held?: boolean }>`
    with u as (
      insert into identities (id, organization_id, user_name, external_id, employee_number, active, manager_id, scim,
        traits, password_hash, created_at, updated_at, modified_hour)
      values (${row.id}, ${row.organization_id}, ${row.user_name}, ${row.external_id}, ${row.employee_number},
        ${row.active}, ${row.manager_id}::uuid, ${JSON.stringify(row.scim)}::jsonb, ${JSON.stringify(row.traits)}::jsonb,
        ${row.password_hash}, ${row.now}, ${row.now}, ${hourOf(row.now)})
      returning ${columnsOf(db, "identities", false)}
    ), x as (
      insert into identity_identifiers (value, kind, identity_id, organization_id)
      select v.value, v.kind, u.id, ${row.organization_id}::uuid
      from u, unnest(${identifiers.map((x) => x.value)}::text[], ${identifiers.map((x) => x.kind)}::text[]) as v(value, kind)
    )${extensionClause(row.organization_id, extensionValues)}${eventsClause(events, true)}
    select *${heldColumn(events, true)} from u`
    .execute(db)
    .catch(rethrowClientGone);
  const [inserted] = rows;
  if (inserted === undefined) throw new Error("insert returned no row");
  return { ...inserted, flowed: inserted.held === false };
}

/** The extension index rows of a new identity, as a clause of createUser (nothing for most clients). */
const extensionClause = (orgId: string, values: readonly ExtensionValue[]) =>
  values.length === 0
    ? sql``
    : sql`, ev as (
      insert into identity_extension_values (identity_id, organization_id, attribute, value, value_digest, is_unique)
      select u.id, ${orgId}::uuid, v.attribute, v.value, ${digestOf(sql.ref("v.value"))}, v.is_unique
      from u, unnest(${values.map((x) => x.attribute)}::text[], ${values.map((x) => x.value)}::text[],
        ${values.map((x) => x.unique)}::boolean[]) as v(attribute, value, is_unique)
    )`;

/** An update under the row lock (lockUser); the password hash changes only when given. */
export async function updateUser(
  trx: Transaction<Database>,
  orgId: string,
  id: string,
  values: IdentityValues & { password_hash?: string; now: Date },
  groups: boolean,
): Promise<UserRow> {
  const password = values.password_hash === undefined ? sql`` : sql`, password_hash = ${values.password_hash}`;
  const { rows } = await sql<UserRow>`update identities set user_name = ${values.user_name},
      external_id = ${values.external_id}, employee_number = ${values.employee_number}, active = ${values.active},
      manager_id = ${values.manager_id}::uuid, scim = ${JSON.stringify(values.scim)}::jsonb,
      traits = ${JSON.stringify(values.traits)}::jsonb, updated_at = ${values.now}, modified_hour = ${hourOf(values.now)},
      version = version + 1${password}
    where organization_id = ${orgId} and id = ${id}
    returning ${columnsOf(trx, "identities", groups)}`.execute(trx);
  const [updated] = rows;
  if (updated === undefined) throw new Error("the locked row was not updated");
  return updated;
}

/** Deletes the identity; with `expected`, only while its version is one of them (the If-Match of a DELETE). */
export async function deleteUser(
  trx: Transaction<Database>,
  orgId: string,
  id: string,
  expected?: readonly string[],
): Promise<{ id: string; scim: Record<string, unknown> } | undefined> {
  return trx
    .deleteFrom("identities")
    .where("organization_id", "=", orgId)
    .where("id", "=", id)
    .$if(expected !== undefined, (q) => q.where(sql<boolean>`version::text = any(${expected ?? []}::text[])`))
    .returning(["id", "scim"])
    .executeTakeFirst();
}

/** The identity's row version, or undefined when there is none (a DELETE's If-Match tells 412 from 404 by it). */
export async function versionOf(trx: Transaction<Database>, orgId: string, id: string): Promise<string | undefined> {
  const row = await trx
    .selectFrom("identities")
    .select(sql<string>`version::text`.as("version"))
    .where("organization_id", "=", orgId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row?.version;
}

/**
 * The groups this identity is a direct member of, marked modified now: they lose a member when it is deleted
 * (as groups/repo touchParentsOf does for a deleted member group). Run before the delete, which takes the identity
 * row: group rows first, as a group PATCH locks them, so the two never wait on each other in opposite order.
 * Returns those groups (for their group.user_removed events), in id order.
 */
export async function touchGroupsOf(
  trx: Transaction<Database>,
  orgId: string,
  id: string,
  now: Date,
): Promise<{ id: string; display_name: string; external_id: string | null }[]> {
  // Locked in id order, as every statement that locks several group rows does (docs/decisions.md "Group membership
  // lock order"), so a user deletion and a group deletion never wait on each other's group rows.
  const { rows } = await sql<{ id: string; display_name: string; external_id: string | null }>`
    with locked as (
      select g.id from directory_groups g
      where g.organization_id = ${orgId}
        and g.id in (select group_id from group_user_members where identity_id = ${id})
      order by g.id
      for no key update
    )
    update directory_groups g set updated_at = ${now}, version = g.version + 1
    from locked where g.id = locked.id
    returning g.id, g.display_name, g.external_id`.execute(trx);
  return rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * Clears `manager` of the enterprise extension on the users of the organization that name `managerId` (found by
 * identities_manager_idx on manager_id), as a new version of each; an enterprise object left empty
 * goes, with its URN in `schemas`. Returns the users changed, with their documents as written.
 */
export async function clearManager(
  trx: Transaction<Database>,
  orgId: string,
  managerId: string,
  now: Date,
): Promise<{ id: string; scim: Record<string, unknown> }[]> {
  const { rows } = await sql<{ id: string; scim: Record<string, unknown> }>`
    with reports as (
      select id from identities where organization_id = ${orgId} and manager_id = ${managerId}
      order by id for no key update
    )
    update identities i set
      scim = case when (i.scim -> ${ENTERPRISE_KEY}) - 'manager' = '{}'::jsonb
        then (i.scim - ${ENTERPRISE_KEY}) || jsonb_build_object('schemas', coalesce(
          (select jsonb_agg(s) from jsonb_array_elements(i.scim -> 'schemas') s where s #>> '{}' <> ${ENTERPRISE_KEY}),
          '[]'::jsonb))
        else i.scim #- array[${ENTERPRISE_KEY}, 'manager'] end,
      manager_id = null, updated_at = ${now}, modified_hour = ${hourOf(now)}, version = i.version + 1
    from reports where i.id = reports.id
    returning i.id, i.scim`.execute(trx);
  return rows;
}

/** Replaces an identity's rows of the extension index for the attributes `keys` (see replaceIndexedValues). */
export const replaceExtensionValues = (
  trx: Transaction<Database>,
  orgId: string,
  identityId: string,
  keys: readonly string[],
  values: readonly ExtensionValue[],
): Promise<void> => replaceIndexedValues(trx, IDENTITY_EXTENSION_INDEX, orgId, identityId, keys, values);
