import { type AliasedRawBuilder, type Expression, type RawBuilder, type SqlBool, sql, type Transaction } from "kysely";
import { type Db, PREPARED } from "../../storage/database.js";
import { executePrepared } from "../../storage/prepared.js";
import type { Database } from "../../storage/schema.js";
import { ENTERPRISE_KEY, type Identifier } from "./document.js";
import type { GroupRef, UserFilter, UserPage } from "./types.js";

/** Kysely only: every query filters on the organization and is served by an index of 0001-foundation. */
type Executor = Db | Transaction<Database>;

export const IDENTIFIERS_KEY = "identity_identifiers_value_key";

export interface UserRow {
  id: string;
  organization_id: string;
  scim: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  groups?: GroupRef[] | null;
  manager_display_name: string | null;
}

const UUID_PATTERN = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

/** Direct memberships, in one correlated subquery (no N+1): group_user_members_identity_idx, then the group pkey. */
const groupsOf = (table: string) =>
  sql<GroupRef[]>`(select coalesce(json_agg(json_build_object('value', g.id, 'display', g.display_name)
      order by g.display_name, g.id), '[]'::json)
    from group_user_members m join directory_groups g on g.id = m.group_id
    where m.identity_id = ${sql.ref(`${table}.id`)} and g.organization_id = ${sql.ref(`${table}.organization_id`)})`.as(
    "groups",
  );

/** Spec 2.2: the manager's displayName (else userName), resolved only inside the same organization. */
const managerOf = (table: string) => {
  const value = sql`(${sql.ref(`${table}.scim`)} -> ${sql.lit(ENTERPRISE_KEY)} -> 'manager' ->> 'value')`;
  return sql<string | null>`(select coalesce(mi.scim ->> 'displayName', mi.user_name) from identities mi
    where mi.organization_id = ${sql.ref(`${table}.organization_id`)}
      and mi.id = case when ${value} ~ ${sql.lit(UUID_PATTERN)} then ${value}::uuid end)`.as("manager_display_name");
};

const userColumns = (table: string, withGroups: boolean) => {
  const base = [
    sql.ref<string>(`${table}.id`).as("id"),
    sql.ref<string>(`${table}.organization_id`).as("organization_id"),
    sql.ref<Record<string, unknown>>(`${table}.scim`).as("scim"),
    sql.ref<Date>(`${table}.created_at`).as("created_at"),
    sql.ref<Date>(`${table}.updated_at`).as("updated_at"),
    managerOf(table),
  ];
  return withGroups ? [...base, groupsOf(table)] : base;
};

/**
 * A user as JSON text, for a response built by splicing strings (no projection): the stored document as jsonb
 * writes it, the timestamps already as RFC 3339 text, the memberships as the `groups` JSON.
 */
export interface UserTextRow {
  id: string;
  organization_id: string;
  scim: string;
  created: string;
  updated: string;
  groups?: string;
  manager_display_name: string | null;
}

const iso = (column: string) =>
  sql<string>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const groupsTextOf = (table: string) =>
  sql<string>`(select coalesce(json_agg(json_build_object('value', g.id, 'display', g.display_name, 'type', 'direct')
      order by g.display_name, g.id)::text, '[]')
    from group_user_members m join directory_groups g on g.id = m.group_id
    where m.identity_id = ${sql.ref(`${table}.id`)} and g.organization_id = ${sql.ref(`${table}.organization_id`)})`.as(
    "groups",
  );

const userTextColumns = (table: string, withGroups: boolean) => {
  const scim = sql.ref(`${table}.scim`);
  const base = [
    sql.ref<string>(`${table}.id`).as("id"),
    sql.ref<string>(`${table}.organization_id`).as("organization_id"),
    sql<string>`${scim}::text`.as("scim"),
    iso(`${table}.created_at`).as("created"),
    iso(`${table}.updated_at`).as("updated"),
    managerOf(table),
  ];
  return withGroups ? [...base, groupsTextOf(table)] : base;
};

const userById = (db: Executor, orgId: string, id: string) =>
  db.selectFrom("identities as i").where("i.organization_id", "=", orgId).where("i.id", "=", id);

/** findUser as JSON text (see UserTextRow). */
export async function findUserText(
  db: Executor,
  orgId: string,
  id: string,
  groups: boolean,
): Promise<UserTextRow | undefined> {
  const rows = await executePrepared(db, userById(db, orgId, id).select(userTextColumns("i", groups)));
  return rows[0] as UserTextRow | undefined;
}

/** GET /Users/{id}: a named prepared statement (see storage/prepared.ts), planned once per connection. */
export async function findUser(db: Executor, orgId: string, id: string, groups: boolean): Promise<UserRow | undefined> {
  const rows = await executePrepared(db, userById(db, orgId, id).select(userColumns("i", groups)));
  return rows[0] as UserRow | undefined;
}

export interface LockedUser extends UserRow {
  password_hash: string | null;
}

/** The row a replace or patch starts from, locked until the transaction ends (no lost updates). */
export async function lockUser(
  trx: Transaction<Database>,
  orgId: string,
  id: string,
  groups: boolean,
): Promise<LockedUser | undefined> {
  return (await trx
    .selectFrom("identities as i")
    .select([...userColumns("i", groups), "i.password_hash"])
    .where("i.organization_id", "=", orgId)
    .where("i.id", "=", id)
    .forUpdate()
    .executeTakeFirst()) as LockedUser | undefined;
}

export interface IdentityValues {
  user_name: string;
  external_id: string | null;
  employee_number: string | null;
  active: boolean;
  scim: Record<string, unknown>;
  traits: Record<string, unknown>;
}

export interface VersionedUser extends LockedUser {
  /** The row version read: a write guarded by it applies only if nobody changed the row since. */
  version: string;
}

/** The row a replace or patch starts from, read without a lock; see updateUserAt. */
export async function readUser(
  db: Executor,
  orgId: string,
  id: string,
  groups: boolean,
): Promise<VersionedUser | undefined> {
  const { rows } = await sql<VersionedUser>`${sql.raw(PREPARED)}select ${columnsText(db, "i", groups)},
      i.password_hash, i.version::text as version
    from identities as i where i.organization_id = ${orgId} and i.id = ${id}`.execute(db);
  return rows[0];
}

/**
 * userColumns compiled to SQL text once per variant (it has no parameters): building and compiling those
 * expressions on every write cost more Roster CPU than the rest of the statement (issue 8 profile).
 */
const columnTexts = new Map<string, RawBuilder<unknown>>();
function columnsText(db: Executor, table: string, groups: boolean): RawBuilder<unknown> {
  const key = `${table}:${groups}`;
  let text = columnTexts.get(key);
  if (text === undefined) {
    const compiled = sql`${sql.join(userColumns(table, groups))}`.compile(db);
    if (compiled.parameters.length > 0) throw new Error("userColumns must not bind parameters");
    text = sql.raw(compiled.sql);
    columnTexts.set(key, text);
  }
  return text;
}

/** A data-modifying clause to run with the write, given the condition "the write happened" (see EventSink.inline). */
export type Also = (when: RawBuilder<unknown>) => RawBuilder<unknown> | undefined;

const written = sql`exists (select 1 from u)`;
const alsoClause = (also: Also) => {
  const clause = also(written);
  return clause === undefined ? sql`` : sql`, o as (${clause})`;
};

/**
 * Optimistic update in one statement (one round trip, one implicit transaction, synchronously committed): the row
 * is written only if its version is still `version`, and `also` (the outbox rows) only if it was. Undefined when
 * the row changed or vanished since it was read; the caller then starts over under a row lock. Identifiers are not
 * touched: only for writes that keep them.
 */
export async function updateUserAt(
  db: Db,
  orgId: string,
  id: string,
  version: string,
  values: IdentityValues & { now: Date },
  groups: boolean,
  also: Also,
): Promise<UserRow | undefined> {
  const { rows } = await sql<UserRow>`${sql.raw(PREPARED)}
    with u as (
      update identities set user_name = ${values.user_name}, external_id = ${values.external_id},
        employee_number = ${values.employee_number}, active = ${values.active},
        scim = ${JSON.stringify(values.scim)}::jsonb, traits = ${JSON.stringify(values.traits)}::jsonb,
        updated_at = ${values.now}, version = version + 1
      where organization_id = ${orgId} and id = ${id} and version = ${version}::bigint
      returning ${columnsText(db, "identities", groups)}
    )${alsoClause(also)}
    select * from u`.execute(db);
  return rows[0];
}

/**
 * A new identity, its identifiers and `also` (the outbox rows) in one statement: one round trip, one implicit
 * transaction (synchronously committed). A taken identifier fails the whole statement (IDENTIFIERS_KEY).
 */
export async function createUser(
  db: Db,
  row: IdentityValues & { id: string; organization_id: string; password_hash: string | null; now: Date },
  identifiers: readonly Identifier[],
  also: Also,
): Promise<UserRow> {
  const { rows } = await sql<UserRow>`${sql.raw(PREPARED)}
    with u as (
      insert into identities (id, organization_id, user_name, external_id, employee_number, active, scim, traits,
        password_hash, created_at, updated_at)
      values (${row.id}, ${row.organization_id}, ${row.user_name}, ${row.external_id}, ${row.employee_number},
        ${row.active}, ${JSON.stringify(row.scim)}::jsonb, ${JSON.stringify(row.traits)}::jsonb, ${row.password_hash},
        ${row.now}, ${row.now})
      returning ${columnsText(db, "identities", false)}
    ), x as (
      insert into identity_identifiers (value, kind, identity_id, organization_id)
      select v.value, v.kind, u.id, u.organization_id
      from u, unnest(${identifiers.map((x) => x.value)}::text[], ${identifiers.map((x) => x.kind)}::text[]) as v(value, kind)
    )${alsoClause(also)}
    select * from u`.execute(db);
  const [inserted] = rows;
  if (inserted === undefined) throw new Error("insert returned no row");
  return inserted;
}

export async function updateUser(
  trx: Transaction<Database>,
  orgId: string,
  id: string,
  values: IdentityValues & { password_hash?: string; now: Date },
  groups: boolean,
): Promise<UserRow> {
  const { now, password_hash, ...rest } = values;
  return (await trx
    .updateTable("identities")
    .set({
      ...rest,
      scim: JSON.stringify(rest.scim),
      traits: JSON.stringify(rest.traits),
      updated_at: now,
      version: sql<number>`version + 1`,
      ...(password_hash === undefined ? {} : { password_hash }),
    })
    .where("organization_id", "=", orgId)
    .where("id", "=", id)
    .returning(userColumns("identities", groups))
    .executeTakeFirstOrThrow()) as UserRow;
}

export async function deleteUser(
  trx: Transaction<Database>,
  orgId: string,
  id: string,
): Promise<{ id: string; scim: Record<string, unknown> } | undefined> {
  return trx
    .deleteFrom("identities")
    .where("organization_id", "=", orgId)
    .where("id", "=", id)
    .returning(["id", "scim"])
    .executeTakeFirst();
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
  const rows = await trx
    .updateTable("directory_groups")
    .set({ updated_at: now })
    .where("organization_id", "=", orgId)
    .where("id", "in", (eb) => eb.selectFrom("group_user_members").select("group_id").where("identity_id", "=", id))
    .returning(["id", "display_name", "external_id"])
    .execute();
  return rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export async function insertIdentifiers(
  trx: Transaction<Database>,
  orgId: string,
  identityId: string,
  identifiers: readonly Identifier[],
): Promise<void> {
  if (identifiers.length === 0) return;
  await trx
    .insertInto("identity_identifiers")
    .values(identifiers.map((x) => ({ ...x, identity_id: identityId, organization_id: orgId })))
    .execute();
}

export async function deleteIdentifiers(
  trx: Transaction<Database>,
  identityId: string,
  values: readonly string[],
): Promise<void> {
  if (values.length === 0) return;
  await trx
    .deleteFrom("identity_identifiers")
    .where("identity_id", "=", identityId)
    .where("value", "in", values)
    .execute();
}

export interface IdentifierOwner {
  value: string;
  identity_id: string;
  organization_id: string;
}

/** Who holds these identifiers now (after a unique violation, to say where the clash is). */
export async function identifierOwners(db: Executor, values: readonly string[]): Promise<IdentifierOwner[]> {
  if (values.length === 0) return [];
  return db
    .selectFrom("identity_identifiers")
    .select(["value", "identity_id", "organization_id"])
    .where("value", "in", values)
    .execute();
}

function filtered(db: Executor, orgId: string, filter: UserFilter | undefined) {
  const q = db.selectFrom("identities as i").where("i.organization_id", "=", orgId);
  if (filter === undefined) return q;
  switch (filter.attribute) {
    case "userName":
      // identities_org_user_name_idx is on lower(user_name): the same expression must appear here.
      return q.where(sql<SqlBool>`lower(i.user_name) = lower(${filter.value})` as Expression<SqlBool>);
    case "externalId":
      return q.where("i.external_id", "=", filter.value);
    case "employeeNumber":
      return q.where("i.employee_number", "=", filter.value);
    case "groups.value":
      // Spec 4.7.7: direct members only, through group_user_members_pkey (group_id, identity_id).
      return q.where(
        "i.id",
        "in",
        db.selectFrom("group_user_members as m").select("m.identity_id").where("m.group_id", "=", filter.value),
      );
  }
}

/**
 * One list page (spec 4.6): offset = count + ordered OFFSET page; cursor = keyset on the id index. Both run as named
 * prepared statements (one per filter attribute and projection: a bounded set of shapes).
 */
export async function listUsers(
  db: Db,
  orgId: string,
  filter: UserFilter | undefined,
  page: UserPage,
  groups: boolean,
): Promise<{ rows: UserRow[]; total?: number }> {
  return listRows<UserRow>(db, orgId, filter, page, userColumns("i", groups));
}

/** listUsers as JSON text (see UserTextRow). */
export async function listUsersText(
  db: Db,
  orgId: string,
  filter: UserFilter | undefined,
  page: UserPage,
  groups: boolean,
): Promise<{ rows: UserTextRow[]; total?: number }> {
  return listRows<UserTextRow>(db, orgId, filter, page, userTextColumns("i", groups));
}

async function listRows<Row extends { id: string }>(
  db: Db,
  orgId: string,
  filter: UserFilter | undefined,
  page: UserPage,
  columns: readonly AliasedRawBuilder<unknown, string>[],
): Promise<{ rows: Row[]; total?: number }> {
  const base = filtered(db, orgId, filter);
  if (page.kind === "cursor") {
    const q = page.afterId === undefined ? base : base.where("i.id", ">", page.afterId);
    const rows = await executePrepared(db, q.select(columns).orderBy("i.id").limit(page.limit));
    return { rows: rows as unknown as Row[] };
  }
  const count = base.select((eb) => eb.fn.countAll<number>().as("total"));
  if (page.limit === 0) return { rows: [], total: Number((await count.executeTakeFirstOrThrow()).total) };
  // OFFSET walks startIndex-1 index entries: only the ids, in an index-only scan; the per-user subqueries (groups,
  // manager) then run for the page's rows alone, not for every row OFFSET skips. The count rides along in the same
  // statement (one round trip, one connection), joined so that it comes back even when the page is empty.
  const ids = filtered(db, orgId, filter).select("i.id").orderBy("i.id").offset(page.offset).limit(page.limit);
  const rows = db
    .selectFrom("identities as i")
    .select(columns)
    .where("i.organization_id", "=", orgId)
    .where(sql<SqlBool>`i.id = any(array(${ids}))` as Expression<SqlBool>)
    .orderBy("i.id");
  const result = (await executePrepared(
    db,
    db
      .selectFrom(count.as("c"))
      .leftJoinLateral(rows.as("u"), (join) => join.onTrue())
      .selectAll("u")
      .select("c.total")
      .orderBy("u.id"),
  )) as unknown as (Row & { total: number; id: string | null })[];
  const total = Number(result[0]?.total ?? 0);
  const list = result.filter((r) => r.id !== null).map(({ total: _total, ...row }) => row as unknown as Row);
  return { rows: list, total };
}

const identityColumns = [
  "id",
  "organization_id",
  "active",
  "user_name",
  "traits",
  "scim",
  "created_at",
  "updated_at",
] as const;

export interface IdentityRow {
  id: string;
  organization_id: string;
  active: boolean;
  user_name: string;
  traits: Record<string, unknown>;
  scim: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  has_password: boolean;
}

const hasPassword = sql<boolean>`password_hash is not null`.as("has_password");

export async function listIdentities(
  db: Db,
  orgId: string | undefined,
  after: string | undefined,
  limit: number,
): Promise<IdentityRow[]> {
  let q = db
    .selectFrom("identities")
    .select([...identityColumns, hasPassword])
    .orderBy("id")
    .limit(limit);
  if (orgId !== undefined) q = q.where("organization_id", "=", orgId);
  if (after !== undefined) q = q.where("id", ">", after);
  return q.execute();
}

export async function getIdentity(db: Db, id: string): Promise<IdentityRow | undefined> {
  return db
    .selectFrom("identities")
    .select([...identityColumns, hasPassword])
    .where("id", "=", id)
    .executeTakeFirst();
}

/** The identity an identifier (userName or email, any case) names, with its password hash: for verification only. */
export async function credentialOf(
  db: Db,
  identifier: string,
): Promise<(IdentityRow & { password_hash: string | null }) | undefined> {
  return db
    .selectFrom("identity_identifiers as x")
    .innerJoin("identities", "identities.id", "x.identity_id")
    .select([...identityColumns.map((c) => `identities.${c}` as const), hasPassword, "identities.password_hash"])
    .where("x.value", "=", identifier)
    .executeTakeFirst();
}
