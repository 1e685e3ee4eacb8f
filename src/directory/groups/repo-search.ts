import { type RawBuilder, type Selectable, type SqlBool, sql } from "kysely";
import type { DirectoryGroupsTable } from "../../storage/schema.js";
import type { Column, CoreColumns, Storage } from "../search/repo-compile.js";
import { compileFilter, coreColumn } from "../search/repo-compile.js";
import { afterSortPosition, compileSort, sortValueOf } from "../search/repo-sort.js";
import type { FieldRef, FilterNode, SearchSpec } from "../search/types.js";
import { type Executor, listGroups, toGroup } from "./repo.js";
import type { GroupFilter, GroupList, GroupPage } from "./types.js";

/**
 * Where a group's attributes live: the columns of `directory_groups g`, its members in the two membership tables,
 * and the extension objects in `g.extensions` (0014-group-extensions). Groups keep no other document.
 */
const GROUP_COLUMNS: CoreColumns = {
  meta: { created: sql`g.created_at`, lastModified: sql`g.updated_at`, resourceType: sql`'Group'::text` },
  attributes: new Map<string, Column>([
    ["id", { expr: sql`g.id`, kind: "uuid" }],
    ["displayName", { expr: sql`g.display_name`, kind: "text" }],
    ["externalId", { expr: sql`g.external_id`, kind: "text" }],
  ]),
};

const groupStorage = (orgId: string): Storage => ({
  id: sql`g.id`,
  column: (f) => coreColumn(f, GROUP_COLUMNS),
  container: (f) => (f.core ? sql`'{}'::jsonb` : sql`(g.extensions -> ${f.schema}::text)`),
  // Both member tables, each through its primary key (group_id, member): `members eq "<id>"` is two index probes.
  membership: (f) =>
    f.core && f.name === "members"
      ? sql`select u.identity_id as value from group_user_members u where u.group_id = g.id
          union all select n.member_group_id from group_group_members n where n.group_id = g.id`
      : undefined,
  indexHint: (f, value) =>
    f.indexKey === undefined
      ? undefined
      : sql<SqlBool>`g.id = any(array(select x.group_id from group_extension_values x
          where x.organization_id = ${orgId} and x.attribute = ${f.indexKey} and x.value = ${value}))`,
});

const isCore = (f: FieldRef, name: string) => f.core && f.name === name && f.sub === undefined;

/** `displayName eq`, `externalId eq` and indexed extension attributes keep the statements of repo.ts. */
function simpleForm(filter: FilterNode | undefined): GroupFilter | undefined | "compiled" {
  if (filter === undefined) return undefined;
  if (filter.op !== "eq" || typeof filter.value !== "string") return "compiled";
  if (isCore(filter.field, "displayName")) return { attribute: "displayName", value: filter.value };
  if (isCore(filter.field, "externalId")) return { attribute: "externalId", value: filter.value };
  if (filter.field.indexKey === undefined) return "compiled";
  const value = filter.field.caseExact ? filter.value : filter.value.toLowerCase();
  return { attribute: "extension", key: filter.field.indexKey, value };
}

/**
 * One list page of groups matching a filter, in a sort, evaluated by PostgreSQL (see searchUsers). Entra ID's
 * last-member check `id eq "<group>" and members eq "<user>"` is a primary-key read and two membership probes.
 */
export async function searchGroups(db: Executor, orgId: string, spec: SearchSpec, page: GroupPage): Promise<GroupList> {
  const simple = simpleForm(spec.filter);
  if (spec.sort === undefined && simple !== "compiled") return listGroups(db, orgId, simple, page);

  const storage = groupStorage(orgId);
  const where: RawBuilder<SqlBool> = spec.filter === undefined ? sql`true` : compileFilter(spec.filter, storage);
  const matching = sql`from directory_groups as g where g.organization_id = ${orgId} and ${where}`;
  if (spec.sort !== undefined && page.kind === "cursor") {
    // A sorted cursor page: a keyset after the previous page's last (sort value, id), never OFFSET.
    const { sort } = spec;
    const after =
      page.afterId === undefined
        ? sql``
        : sql`and ${afterSortPosition(sort, storage, page.afterValue ?? null, page.afterId)}`;
    const { rows } = await sql<Selectable<DirectoryGroupsTable> & { sort_value: string | null }>`
      select g.*, ${sortValueOf(sort, storage)} as sort_value ${matching} ${after}
      order by ${compileSort(sort, storage)} limit ${page.limit}`.execute(db);
    return { rows: rows.map(toGroup), sortValues: rows.map((r) => r.sort_value) };
  }
  let rows: Selectable<DirectoryGroupsTable>[] = [];
  if (page.limit > 0) {
    const order = spec.sort === undefined ? sql`g.id` : compileSort(spec.sort, storage);
    const range =
      page.kind === "offset"
        ? sql`offset ${page.offset}`
        : page.afterId === undefined
          ? sql``
          : sql`and g.id > ${page.afterId}::uuid`;
    const query =
      page.kind === "offset"
        ? sql<Selectable<DirectoryGroupsTable>>`select g.* ${matching} order by ${order} ${range} limit ${page.limit}`
        : sql<Selectable<DirectoryGroupsTable>>`select g.* ${matching} ${range} order by ${order} limit ${page.limit}`;
    rows = (await query.execute(db)).rows;
  }
  if (page.kind === "cursor") return { rows: rows.map(toGroup) };
  const { rows: counted } = await sql<{ total: string }>`select count(*) as total ${matching}`.execute(db);
  return { rows: rows.map(toGroup), total: Number(counted[0]?.total ?? 0) };
}
