import { type Expression, type RawBuilder, type SqlBool, sql, type Transaction } from "kysely";
import type { Db } from "../../storage/database.js";
import { type PreparedStatement, preparedStatement, runPrepared } from "../../storage/prepared.js";
import type { Database } from "../../storage/schema.js";
import { organizationTotal } from "../resource-counts.js";
import type { Identifier } from "./document.js";
import type { IndexedAttribute } from "../scim-clients/extensions.js";
import type { ExtensionValue } from "./extension-values.js";
import type { CursorPage, GroupRef, OffsetPage, UserFilter, UserPage } from "./types.js";

const USER_BY_ID = preparedStatement("user_by_id");
const USER_TEXT_BY_ID = preparedStatement("user_text_by_id");
const USER_VERSIONED = preparedStatement("user_versioned");
const USER_UPDATE = preparedStatement("user_update");
const USER_CREATE = preparedStatement("user_create");
const USERS_WITH_GROUPS = preparedStatement("users_with_groups");
const USERS_AFTER_CURSOR = preparedStatement("users_after_cursor");
const USERS_PAGE = preparedStatement("users_page");
const USERS_PAGE_TEXT = preparedStatement("users_page_text");
const USERS_LOOKUP_TEXT = preparedStatement("users_lookup_text");

/** Kysely only: every query filters on the organization and is served by an index of 0001-foundation. */
type Executor = Db | Transaction<Database>;

export const IDENTIFIERS_KEY = "identity_identifiers_value_key";
/** The partial unique index that enforces `uniqueness: "server"` of extension attributes (0010-scim-extensions). */
export const EXTENSION_UNIQUE_KEY = "identity_extension_values_unique_key";

export interface UserRow {
  id: string;
  organization_id: string;
  scim: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  groups?: GroupRef[] | null;
  manager_display_name: string | null;
}

/** The `groups` array of the memberships `m` joined to their groups `g`, as JSON text (null when there are none). */
const GROUPS_ARRAY = sql`'[' || string_agg('{"value":"' || g.id::text || '","display":' || to_json(g.display_name)::text
    || ',"type":"direct"}', ',' order by g.display_name, g.id) || ']'`;

/**
 * A user's direct memberships as `groups` JSON text, in one correlated subquery (no N+1):
 * group_user_members_identity_idx, then the group pkey. Built with string_agg: json_agg of json_build_object cost
 * twice as much (issue 8).
 */
const membershipsOf = (table: string) =>
  sql<string>`(select coalesce(${GROUPS_ARRAY}, '[]')
    from group_user_members m join directory_groups g on g.id = m.group_id
    where m.identity_id = ${sql.ref(`${table}.id`)} and g.organization_id = ${sql.ref(`${table}.organization_id`)})`;

/** membershipsOf as objects (pg parses json), for the rows rendered as objects. */
const groupsOf = (table: string) => sql<GroupRef[]>`${membershipsOf(table)}::json`.as("groups");

/** membershipsOf as text, for the rows spliced as text (one user: cheaper than the page aggregate). */
const groupsTextOf = (table: string) => membershipsOf(table).as("groups");

/**
 * Spec 2.2: the manager's displayName (else userName), resolved only inside the same organization. `manager_id` is
 * the manager's value when it is a UUID, computed by PostgreSQL on write (0007-list-reads): one index lookup.
 */
const managerOf = (table: string) =>
  sql<string | null>`(select coalesce(mi.scim ->> 'displayName', mi.user_name) from identities mi
    where mi.organization_id = ${sql.ref(`${table}.organization_id`)} and mi.id = ${sql.ref(`${table}.manager_id`)})`.as(
    "manager_display_name",
  );

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
 * writes it, the timestamps as UTC text (see utcText), the memberships as the `groups` JSON array.
 */
export interface UserTextRow {
  id: string;
  scim: string;
  /** Whether the document holds a key the server owns (id, meta, groups, password): then it needs the object path. */
  owned: boolean;
  /** `YYYY-MM-DD HH:MI:SS[.ffffff]` in UTC: timestamp output under DateStyle ISO (set on every session). */
  created: string;
  updated: string;
  groups: string;
  manager_display_name: string | null;
}

/** A timestamp as UTC text: PostgreSQL's own output function, far cheaper than to_char. */
const utcText = (column: string) => sql<string>`(${sql.ref(column)} at time zone 'UTC')::text`;

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

const userTextColumns = [
  sql.ref<string>("i.id").as("id"),
  sql<string>`i.scim::text`.as("scim"),
  sql<boolean>`i.scim ?| array['id', 'meta', 'groups', 'password']`.as("owned"),
  utcText("i.created_at").as("created"),
  utcText("i.updated_at").as("updated"),
  managerOf("i"),
];

/**
 * The direct memberships of every user of `p` (the page), as `groups` JSON text, in one aggregate for the page
 * rather than a subquery per user (issue 8 profile: ~3× cheaper for users in a few groups): group_user_members_
 * identity_idx per user, then the groups of the organization.
 */
const pageGroups = (orgId: string) => sql`select m.identity_id, ${GROUPS_ARRAY} as groups
    from group_user_members m join directory_groups g on g.id = m.group_id
    where m.identity_id in (select id from p) and g.organization_id = ${orgId}
    group by m.identity_id`;

/** userTextColumns and the user's groups as constant SQL text (see constantSql): one user's row, as text. */
const textColumns = (db: Executor) =>
  constantSql(db, "text:i", () => sql.join([...userTextColumns, groupsTextOf("i")]));

/** The users `page` selects (userTextColumns of `identities as i`), with their `groups`, in id order. */
function withGroups(db: Executor, orgId: string, page: Expression<unknown>): Promise<UserTextRow[]> {
  return rowsOf<UserTextRow>(
    db,
    USERS_WITH_GROUPS,
    sql`with p as (${page}), gr as (${pageGroups(orgId)})
      select p.*, coalesce(gr.groups, '[]') as groups from p left join gr on gr.identity_id = p.id order by p.id`,
  );
}

const rowsOf = async <R>(db: Executor, statement: PreparedStatement, query: RawBuilder<unknown>): Promise<R[]> =>
  (await runPrepared(db, statement, query)).rows as R[];

const userById = (db: Executor, orgId: string, id: string) =>
  db.selectFrom("identities as i").where("i.organization_id", "=", orgId).where("i.id", "=", id);

/**
 * findUser as JSON text (see UserTextRow), memberships included. The hottest read: its column list is SQL text
 * compiled once (constantSql), so a request builds nothing but the two parameters.
 */
export async function findUserText(db: Executor, orgId: string, id: string): Promise<UserTextRow | undefined> {
  const columns = textColumns(db);
  const { rows } = await USER_TEXT_BY_ID.sql<UserTextRow>`select ${columns}
    from identities as i where i.organization_id = ${orgId} and i.id = ${id}`.execute(db);
  return rows[0];
}

/** GET /Users/{id}: a named prepared statement (storage/prepared.ts), planned once per connection. */
export async function findUser(db: Executor, orgId: string, id: string, groups: boolean): Promise<UserRow | undefined> {
  const { rows } = await runPrepared(db, USER_BY_ID, userById(db, orgId, id).select(userColumns("i", groups)));
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
  const { rows } = await USER_VERSIONED.sql<VersionedUser>`select ${columnsText(db, "i", groups)},
      i.password_hash, i.version::text as version
    from identities as i where i.organization_id = ${orgId} and i.id = ${id}`.execute(db);
  return rows[0];
}

/**
 * A parameterless SQL fragment compiled to text once per key: building and compiling the column expressions on every
 * request cost more Roster CPU than the rest of the statement (issue 8 profile).
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

/** userColumns as constant SQL text (see constantSql). */
const columnsText = (db: Executor, table: string, groups: boolean): RawBuilder<unknown> =>
  constantSql(db, `${table}:${groups}`, () => sql.join(userColumns(table, groups)));

/** A data-modifying clause to run with the write, given the condition "the write happened" (see EventSink.inline). */
export type Also = (when: RawBuilder<unknown>) => RawBuilder<unknown> | undefined;

const written = sql`exists (select 1 from u)`;
const alsoClause = (also: Also) => {
  const clause = also(written);
  return clause === undefined ? sql`` : sql`, ${clause}`;
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
  const { rows } = await USER_UPDATE.sql<UserRow>`
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
  extensionValues: readonly ExtensionValue[] = [],
): Promise<UserRow> {
  const { rows } = await USER_CREATE.sql<UserRow>`
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
    )${extensionClause(extensionValues)}${alsoClause(also)}
    select * from u`.execute(db);
  const [inserted] = rows;
  if (inserted === undefined) throw new Error("insert returned no row");
  return inserted;
}

/** The extension index rows of a new identity, as a clause of createUser (nothing for most clients). */
const extensionClause = (values: readonly ExtensionValue[]) =>
  values.length === 0
    ? sql``
    : sql`, ev as (
      insert into identity_extension_values (identity_id, organization_id, attribute, value, is_unique)
      select u.id, u.organization_id, v.attribute, v.value, v.is_unique
      from u, unnest(${values.map((x) => x.attribute)}::text[], ${values.map((x) => x.value)}::text[],
        ${values.map((x) => x.unique)}::boolean[]) as v(attribute, value, is_unique)
    )`;

/**
 * Replaces an identity's rows of the extension index for the attributes `keys` (those the writing client
 * indexes; other clients' rows stay). A taken unique value fails with EXTENSION_UNIQUE_KEY.
 */
export async function replaceExtensionValues(
  trx: Transaction<Database>,
  orgId: string,
  identityId: string,
  keys: readonly string[],
  values: readonly ExtensionValue[],
): Promise<void> {
  await trx
    .deleteFrom("identity_extension_values")
    .where("identity_id", "=", identityId)
    .where("attribute", "in", keys)
    .execute();
  if (values.length === 0) return;
  await trx
    .insertInto("identity_extension_values")
    .values(
      values.map((v) => ({
        identity_id: identityId,
        organization_id: orgId,
        attribute: v.attribute,
        value: v.value,
        is_unique: v.unique,
      })),
    )
    .execute();
}

/**
 * Rebuilds the extension index of an organization for attributes a client newly indexes (or indexes differently),
 * from the stored documents: one statement per attribute over the organization's users. A value that several users
 * already repeat keeps its first holder only (ON CONFLICT DO NOTHING on the unique index).
 */
export async function reindexExtensionAttributes(
  trx: Transaction<Database>,
  orgId: string,
  attributes: readonly IndexedAttribute[],
): Promise<void> {
  for (const a of attributes) {
    await trx
      .deleteFrom("identity_extension_values")
      .where("organization_id", "=", orgId)
      .where("attribute", "=", a.key)
      .execute();
    const raw = sql<string>`i.scim -> ${a.schema}::text ->> ${a.name}::text`;
    await sql`insert into identity_extension_values (identity_id, organization_id, attribute, value, is_unique)
      select i.id, i.organization_id, ${a.key}, ${a.caseExact ? raw : sql`lower(${raw})`}, ${a.unique}
      from identities i
      where i.organization_id = ${orgId} and jsonb_typeof(i.scim -> ${a.schema}::text -> ${a.name}::text) = 'string'
        and ${raw} <> ''
      order by i.id
      on conflict do nothing`.execute(trx);
  }
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
    update directory_groups g set updated_at = ${now}
    from locked where g.id = locked.id
    returning g.id, g.display_name, g.external_id`.execute(trx);
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

type ColumnFilter = { readonly attribute: "userName" | "externalId" | "employeeNumber"; readonly value: string };
const isColumnFilter = (filter: UserFilter): filter is ColumnFilter =>
  filter.attribute !== "groups.value" && filter.attribute !== "extension";

/** The filters an index answers with a row or a few (see listUsersText), as the condition on `i`. */
const UNIQUE_FILTERS: Record<ColumnFilter["attribute"], (value: string) => RawBuilder<SqlBool>> = {
  // identities_org_user_name_idx is on lower(user_name): the same expression must appear here.
  userName: (value) => sql`lower(i.user_name) = lower(${value})`,
  externalId: (value) => sql`i.external_id = ${value}`,
  employeeNumber: (value) => sql`i.employee_number = ${value}`,
};

function filtered(db: Executor, orgId: string, filter: UserFilter | undefined) {
  const q = db.selectFrom("identities as i").where("i.organization_id", "=", orgId);
  if (filter === undefined) return q;
  if (isColumnFilter(filter)) return q.where(UNIQUE_FILTERS[filter.attribute](filter.value));
  if (filter.attribute === "extension") {
    // One index for every tenant's extension attributes: identity_extension_values_lookup_idx.
    return q.where(
      "i.id",
      "in",
      db
        .selectFrom("identity_extension_values as x")
        .select("x.identity_id")
        .where("x.organization_id", "=", orgId)
        .where("x.attribute", "=", filter.key)
        .where("x.value", "=", filter.value),
    );
  }
  // Spec 4.7.7: direct members only, through group_user_members_pkey (group_id, identity_id).
  return q.where(
    "i.id",
    "in",
    db.selectFrom("group_user_members as m").select("m.identity_id").where("m.group_id", "=", filter.value),
  );
}

/**
 * An unfiltered total is the organization's user counter (0007-list-reads: a few rows, whatever its size); a filtered
 * one counts the rows the filter's index finds.
 */
function countOf(db: Executor, orgId: string, filter: UserFilter | undefined) {
  if (filter === undefined) return organizationTotal(db, orgId, "users");
  return filtered(db, orgId, filter).select((eb) => eb.fn.countAll<number>().as("total"));
}

/**
 * The ids of an offset page. OFFSET walks startIndex-1 index entries: only the ids, in an index-only scan; the
 * per-user work (document, manager, groups) then runs for the page's rows alone, not for every row OFFSET skips.
 */
const offsetIds = (db: Executor, orgId: string, filter: UserFilter | undefined, page: OffsetPage) =>
  filtered(db, orgId, filter).select("i.id").orderBy("i.id").offset(page.offset).limit(page.limit);

const byIds = (db: Executor, orgId: string, ids: ReturnType<typeof offsetIds>) =>
  db
    .selectFrom("identities as i")
    .where("i.organization_id", "=", orgId)
    .where(sql<SqlBool>`i.id = any(array(${ids}))` as Expression<SqlBool>);

const afterCursor = (db: Executor, orgId: string, filter: UserFilter | undefined, page: CursorPage) => {
  const base = filtered(db, orgId, filter);
  return page.afterId === undefined ? base : base.where("i.id", ">", page.afterId);
};

/**
 * One list page (spec 4.6): offset = total + ordered OFFSET page; cursor = keyset on the id index. Both run as named
 * prepared statements (one per filter attribute and projection: a bounded set of shapes), in one statement each.
 */
export async function listUsers(
  db: Db,
  orgId: string,
  filter: UserFilter | undefined,
  page: UserPage,
  groups: boolean,
): Promise<{ rows: UserRow[]; total?: number }> {
  const columns = userColumns("i", groups);
  if (page.kind === "cursor") {
    const q = afterCursor(db, orgId, filter, page).select(columns).orderBy("i.id").limit(page.limit);
    return { rows: (await runPrepared(db, USERS_AFTER_CURSOR, q)).rows as UserRow[] };
  }
  const count = countOf(db, orgId, filter);
  if (page.limit === 0) return { rows: [], total: Number((await count.executeTakeFirstOrThrow()).total) };
  // The total rides along in the same statement (one round trip, one snapshot), joined so that it comes back even
  // when the page is empty.
  const rows = byIds(db, orgId, offsetIds(db, orgId, filter, page))
    .select(columns)
    .orderBy("i.id");
  const pageWithTotal = db
    .selectFrom(count.as("c"))
    .leftJoinLateral(rows.as("u"), (join) => join.onTrue())
    .selectAll("u")
    .select("c.total")
    .orderBy("u.id");
  const result = (await runPrepared(db, USERS_PAGE, pageWithTotal)).rows as unknown as (UserRow & {
    total: number;
    id: string | null;
  })[];
  return withTotal(result);
}

/** listUsers as JSON text (see UserTextRow), memberships included. */
export async function listUsersText(
  db: Db,
  orgId: string,
  filter: UserFilter | undefined,
  page: UserPage,
): Promise<{ rows: UserTextRow[]; total?: number }> {
  if (page.kind === "cursor") {
    const q = afterCursor(db, orgId, filter, page).select(userTextColumns).orderBy("i.id").limit(page.limit);
    return { rows: await withGroups(db, orgId, q) };
  }
  const count = countOf(db, orgId, filter);
  if (page.limit === 0) return { rows: [], total: Number((await count.executeTakeFirstOrThrow()).total) };
  if (filter !== undefined && isColumnFilter(filter)) {
    const unique = UNIQUE_FILTERS[filter.attribute];
    // An IdP's lookup (`userName eq`, `externalId eq`): a row or none. One plain statement — the total as a window
    // count of the few matching rows, the groups as a scalar subquery — instead of the page machinery below.
    const columns = textColumns(db);
    const { rows } = await USERS_LOOKUP_TEXT.sql<UserTextRow & { total: number }>`select ${columns},
        count(*) over () as total
      from identities as i where i.organization_id = ${orgId} and ${unique(filter.value)}
      order by i.id offset ${page.offset} limit ${page.limit}`.execute(db);
    // Past the last match (startIndex > total) the window has no row to count on: ask the count itself.
    if (rows.length === 0 && page.offset > 0) {
      return { rows: [], total: Number((await count.executeTakeFirstOrThrow()).total) };
    }
    return { rows: rows.map(({ total: _total, ...row }) => row), total: Number(rows[0]?.total ?? 0) };
  }
  const p = byIds(db, orgId, offsetIds(db, orgId, filter, page)).select(userTextColumns);
  const result = await rowsOf<UserTextRow & { total: number; id: string | null }>(
    db,
    USERS_PAGE_TEXT,
    sql`with c as (${count}), p as (${p}), gr as (${pageGroups(orgId)})
      select p.*, coalesce(gr.groups, '[]') as groups, c.total
      from c left join (p left join gr on gr.identity_id = p.id) on true order by p.id`,
  );
  return withTotal(result);
}

/** Rows of a page joined to its total: the total, and the rows (none when the page is empty: one row of nulls). */
function withTotal<Row>(result: readonly (Row & { total: number; id: string | null })[]): {
  rows: Row[];
  total: number;
} {
  const total = Number(result[0]?.total ?? 0);
  const rows = result.filter((r) => r.id !== null).map(({ total: _total, ...row }) => row as unknown as Row);
  return { rows, total };
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
