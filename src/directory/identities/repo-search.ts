import { type RawBuilder, type SqlBool, sql } from "kysely";
import type { Db } from "../../storage/database.js";
import type { Column, CoreColumns, Storage } from "../search/repo-compile.js";
import { compileFilter, coreColumn } from "../search/repo-compile.js";
import { afterSortPosition, compileSort, sortValueOf } from "../search/repo-sort.js";
import type { FieldRef, FilterNode, SearchSpec } from "../search/types.js";
import { ENTERPRISE_KEY } from "./document.js";
import { hourOfSql } from "./repo.js";
import { columnsOf, type UserRow } from "./repo-columns.js";
import { listUsers } from "./repo-reads.js";
import type { UserFilter, UserPage } from "./types.js";

/**
 * Where a user's attributes live (0001-foundation, 0007, 0010): the indexed columns of `identities i`, the
 * memberships, and the stored document `i.scim` for everything else (extension objects under their URN).
 */
const USER_COLUMNS: CoreColumns = {
  meta: {
    created: sql`i.created_at`,
    lastModified: sql`i.updated_at`,
    // Indexed instead of updated_at so that most updates are HOT; written by every write as repo.ts hourOf.
    lastModifiedCoarse: { column: sql`i.modified_hour`, of: hourOfSql },
    resourceType: sql`'User'::text`,
  },
  attributes: new Map<string, Column>([
    ["id", { expr: sql`i.id`, kind: "uuid" }],
    ["userName", { expr: sql`i.user_name`, kind: "text" }],
    ["externalId", { expr: sql`i.external_id`, kind: "text" }],
    ["active", { expr: sql`i.active`, kind: "boolean" }],
  ]),
};

const userStorage = (orgId: string): Storage => ({
  id: sql`i.id`,
  column(f) {
    if (f.schema === ENTERPRISE_KEY && f.name === "employeeNumber")
      return { expr: sql`i.employee_number`, kind: "text" };
    return coreColumn(f, USER_COLUMNS);
  },
  container: (f) => (f.core ? sql`i.scim` : sql`(i.scim -> ${f.schema}::text)`),
  membership: (f) =>
    f.core && f.name === "groups"
      ? sql`select g.group_id as value from group_user_members g where g.identity_id = i.id`
      : undefined,
  indexHint(f, value) {
    if (f.indexKey !== undefined) {
      return sql<SqlBool>`i.id = any(array(select x.identity_id from identity_extension_values x
        where x.organization_id = ${orgId} and x.attribute = ${f.indexKey} and x.value = ${value}))`;
    }
    // Every email value is in the identifier index, lower-cased (identifiersOf): the exact test then reads one row.
    if (f.core && f.name === "emails" && f.sub === "value") {
      return sql<SqlBool>`i.id = any(array(select x.identity_id from identity_identifiers x
        where x.value = lower(${value}) and x.organization_id = ${orgId}))`;
    }
    return undefined;
  },
});

const isCore = (f: FieldRef, name: string) => f.core && f.name === name && f.sub === undefined;

/**
 * The forms an IdP sends on every sync (`userName eq`, `externalId eq`, `groups.value eq`, an indexed extension
 * attribute) keep their prepared statements of repo-reads; everything else is compiled.
 */
function preparedForm(filter: FilterNode | undefined): UserFilter | undefined | "compiled" {
  if (filter === undefined) return undefined;
  if (filter.op === "eq" && typeof filter.value === "string") {
    if (isCore(filter.field, "userName")) return { attribute: "userName", value: filter.value };
    if (isCore(filter.field, "externalId")) return { attribute: "externalId", value: filter.value };
    if (filter.field.indexKey !== undefined) {
      const value = filter.field.caseExact ? filter.value : filter.value.toLowerCase();
      return { attribute: "extension", key: filter.field.indexKey, value };
    }
  }
  const where = filter.op === "any" ? filter.where : undefined;
  if (filter.op === "any" && isCore(filter.field, "groups") && where?.op === "eq" && typeof where.value === "string") {
    return { attribute: "groups.value", value: where.value };
  }
  return "compiled";
}

/**
 * One list page of users matching a filter, in a sort. Indexed forms are served by their indexes (the planner sees
 * the same expressions as the indexes of 0001, 0010 and 0019); the rest is evaluated by PostgreSQL over the stored
 * documents of the organization, bounded by statement_timeout, never by Roster. The prepared forms run on `reads`
 * (generic plans); compiled ones on `db`, planned for their values (a generic plan cannot tell a selective
 * `meta.lastModified gt` from a broad one).
 */
export async function searchUsers(
  reads: Db,
  db: Db,
  orgId: string,
  spec: SearchSpec,
  page: UserPage,
  groups: boolean,
): Promise<{ rows: UserRow[]; total?: number; sortValues?: (string | null)[] }> {
  const prepared = preparedForm(spec.filter);
  if (spec.sort === undefined && prepared !== "compiled") return listUsers(reads, orgId, prepared, page, groups);

  const storage = userStorage(orgId);
  const where: RawBuilder<SqlBool> = spec.filter === undefined ? sql`true` : compileFilter(spec.filter, storage);
  const matching = sql`from identities as i where i.organization_id = ${orgId} and ${where}`;
  // The page's ids in order: an id array numbered by unnest, or, for a sorted cursor page, rows that carry their
  // sort value (for the next cursor) and their place.
  let pageIds: RawBuilder<unknown>;
  let sortValue = sql`null::text`;
  if (page.kind === "cursor" && spec.sort !== undefined) {
    const { sort } = spec;
    const order = compileSort(sort, storage);
    const after =
      page.afterId === undefined
        ? sql``
        : sql`and ${afterSortPosition(sort, storage, page.afterValue ?? null, page.afterId)}`;
    pageIds = sql`(select i.id, ${sortValueOf(sort, storage)} as sort_value, row_number() over (order by ${order}) as n
      ${matching} ${after} order by ${order} limit ${page.limit}) as u`;
    sortValue = sql`u.sort_value`;
  } else if (page.kind === "cursor") {
    const after = page.afterId === undefined ? sql`` : sql`and i.id > ${page.afterId}::uuid`;
    pageIds = sql`unnest(array(select i.id ${matching} ${after} order by i.id limit ${page.limit}))
      with ordinality as u(id, n)`;
  } else {
    const order = spec.sort === undefined ? sql`i.id` : compileSort(spec.sort, storage);
    pageIds = sql`unnest(array(select i.id ${matching} order by ${order} offset ${page.offset} limit ${page.limit}))
      with ordinality as u(id, n)`;
  }
  const count = page.kind === "offset" ? sql`select count(*) as total ${matching}` : sql`select null::bigint as total`;
  if (page.limit === 0) {
    const { rows } = await sql<{ total: string }>`${count}`.execute(db);
    return { rows: [], total: Number(rows[0]?.total ?? 0) };
  }
  // The page's ids in their order first (ids only, from whatever index serves the filter and sort), then the
  // rendering columns for those rows alone; the total rides along in the same statement and snapshot.
  const { rows } = await sql<
    UserRow & { total: string | null; n: string | null; sort_value: string | null }
  >`with c as (${count}),
      p as (select ${columnsOf(db, "i", groups)}, u.n, ${sortValue} as sort_value
        from ${pageIds}
        join identities as i on i.id = u.id and i.organization_id = ${orgId})
    select p.*, c.total from c left join p on true order by p.n`.execute(db);
  const total = rows[0]?.total;
  const listed = rows.filter((r) => r.n !== null);
  const found = listed.map(({ total: _t, n: _n, sort_value: _s, ...row }) => row as UserRow);
  if (page.kind === "offset") return { rows: found, total: Number(total ?? 0) };
  return spec.sort === undefined ? { rows: found } : { rows: found, sortValues: listed.map((r) => r.sort_value) };
}
