import { type Expression, type RawBuilder, type SqlBool, sql } from "kysely";
import type { Db } from "../../storage/database.js";
import { type PreparedStatement, preparedStatement, runPrepared } from "../../storage/prepared.js";
import { digestOf } from "../extension-index-repo.js";
import { organizationTotal } from "../resource-counts-repo.js";
import { columnsOf, type Executor, MEMBERSHIPS, type UserRow, recordColumns } from "./repo-columns.js";
import type { CursorPage, OffsetPage, UserFilter, UserPage } from "./types.js";

const USER_BY_ID = preparedStatement("user_by_id");
const USERS_LOOKUP = preparedStatement("users_lookup");
const USERS_WITH_GROUPS = preparedStatement("users_with_groups");
const USERS_AFTER_CURSOR = preparedStatement("users_after_cursor");
const USERS_PAGE = preparedStatement("users_page");

/**
 * The reads of users (UserRow: the document as text) and identities. The hottest statements are SQL text compiled
 * once (see columnsOf) and run as named prepared statements, one per shape: a request builds nothing but parameters.
 */

/** GET /Users/{id}. */
export async function findUser(db: Executor, orgId: string, id: string, groups: boolean): Promise<UserRow | undefined> {
  const { rows } = await USER_BY_ID.sql<UserRow>`select ${columnsOf(db, "i", groups)}
    from identities as i where i.organization_id = ${orgId} and i.id = ${id}`.execute(db);
  return rows[0];
}

const rowsOf = async <R>(db: Executor, statement: PreparedStatement, query: RawBuilder<unknown>): Promise<R[]> =>
  (await runPrepared(db, statement, query)).rows as R[];

/**
 * The direct memberships of every user of `p` (the page), in one aggregate for the page rather than a subquery per
 * user (~3× cheaper for users in a few groups): group_user_members_identity_idx per user, then the organization's
 * groups.
 */
const pageGroups = (orgId: string) => sql`select m.identity_id, ${MEMBERSHIPS} as groups
    from group_user_members m join directory_groups g on g.id = m.group_id
    where m.identity_id in (select id from p) and g.organization_id = ${orgId}
    group by m.identity_id`;

type ColumnFilter = { readonly attribute: "userName" | "externalId" | "employeeNumber"; readonly value: string };
const isColumnFilter = (filter: UserFilter): filter is ColumnFilter =>
  filter.attribute !== "groups.value" && filter.attribute !== "extension";

/** The filters an index answers with a row or a few (see listUsers), as the condition on `i`. */
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
        .where("x.value_digest", "=", digestOf(filter.value)),
    );
  }
  // `groups.value eq`: direct members only, through group_user_members_pkey (group_id, identity_id).
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

/** The users `page` selects, with their memberships, in id order. */
function withGroups(db: Executor, orgId: string, page: Expression<unknown>): Promise<UserRow[]> {
  return rowsOf<UserRow>(
    db,
    USERS_WITH_GROUPS,
    sql`with p as (${page}), gr as (${pageGroups(orgId)})
      select p.*, coalesce(gr.groups, '[]') as groups from p left join gr on gr.identity_id = p.id order by p.id`,
  );
}

/**
 * One list page: offset = total + ordered OFFSET page; cursor = keyset on the id index. Each runs as one
 * named prepared statement (one per filter attribute and memberships or not: a bounded set of shapes).
 */
export async function listUsers(
  db: Db,
  orgId: string,
  filter: UserFilter | undefined,
  page: UserPage,
  groups: boolean,
): Promise<{ rows: UserRow[]; total?: number }> {
  const columns = recordColumns("i");
  if (page.kind === "cursor") {
    const q = afterCursor(db, orgId, filter, page).select(columns).orderBy("i.id").limit(page.limit);
    return {
      rows: groups
        ? await withGroups(db, orgId, q)
        : ((await runPrepared(db, USERS_AFTER_CURSOR, q)).rows as UserRow[]),
    };
  }
  const count = countOf(db, orgId, filter);
  if (page.limit === 0) return { rows: [], total: Number((await count.executeTakeFirstOrThrow()).total) };
  if (filter !== undefined && isColumnFilter(filter)) {
    const unique = UNIQUE_FILTERS[filter.attribute];
    // An IdP's lookup (`userName eq`, `externalId eq`): a row or none. One plain statement — the total as a window
    // count of the few matching rows, the groups as a scalar subquery — instead of the page machinery below.
    const { rows } = await USERS_LOOKUP.sql<UserRow & { total: number }>`select ${columnsOf(db, "i", groups)},
        count(*) over () as total
      from identities as i where i.organization_id = ${orgId} and ${unique(filter.value)}
      order by i.id offset ${page.offset} limit ${page.limit}`.execute(db);
    // Past the last match (startIndex > total) the window has no row to count on: ask the count itself.
    if (rows.length === 0 && page.offset > 0) {
      return { rows: [], total: Number((await count.executeTakeFirstOrThrow()).total) };
    }
    return { rows: rows.map(({ total: _total, ...row }) => row), total: Number(rows[0]?.total ?? 0) };
  }
  const p = byIds(db, orgId, offsetIds(db, orgId, filter, page)).select(columns);
  // The total rides along in the same statement (one round trip, one snapshot), joined so that it comes back even
  // when the page is empty.
  const result = await rowsOf<UserRow & { total: number; id: string | null }>(
    db,
    USERS_PAGE,
    groups
      ? sql`with c as (${count}), p as (${p}), gr as (${pageGroups(orgId)})
      select p.*, coalesce(gr.groups, '[]') as groups, c.total
      from c left join (p left join gr on gr.identity_id = p.id) on true order by p.id`
      : sql`with c as (${count}), p as (${p})
      select p.*, c.total from c left join p on true order by p.id`,
  );
  const total = Number(result[0]?.total ?? 0);
  const rows = result.filter((r) => r.id !== null).map(({ total: _total, ...row }) => row as UserRow);
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
