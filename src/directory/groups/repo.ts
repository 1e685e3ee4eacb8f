import { type Kysely, type Selectable, type SelectQueryBuilder, sql, type Transaction } from "kysely";
import { isUniqueViolation } from "../../storage/errors.js";
import { preparedStatement, runPrepared } from "../../storage/prepared.js";
import type { Database, DirectoryGroupsTable } from "../../storage/schema.js";
import { organizationTotal } from "../resource-counts-repo.js";
import { GroupError } from "./errors.js";
import { GROUP_EXTENSION_INDEX, indexedMatches } from "../extension-index-repo.js";
import type { Group, GroupExtensions, GroupFilter, GroupPage } from "./types.js";

const GROUP_BY_ID = preparedStatement("group_by_id");
const GROUP_FOR_UPDATE = preparedStatement("group_for_update");
const GROUP_UPDATE = preparedStatement("group_update");

/** The pool or a transaction: repository functions run wherever the service runs them. */
export type Executor = Kysely<Database>;
/**
 * A group write's open transaction: the service holds it only to pass it on to the repository functions of the
 * same change (membership, nesting lock, events), never to query through it.
 */
export type GroupTransaction = Transaction<Database>;

const EXTERNAL_ID_KEY = "directory_groups_org_external_id_key";
/** The partial unique index that enforces `uniqueness: "server"` of Group extension attributes (0014). */
export const GROUP_EXTENSION_UNIQUE_KEY = "group_extension_values_unique_key";

const extensionsJson = (extensions: GroupExtensions | null | undefined): string | null =>
  extensions === null || extensions === undefined ? null : JSON.stringify(extensions);

export const toGroup = (row: Selectable<DirectoryGroupsTable>): Group => ({
  id: row.id,
  organizationId: row.organization_id,
  displayName: row.display_name,
  externalId: row.external_id,
  extensions: row.extensions ?? null,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  version: String(row.version),
});

/** A duplicate externalId within the organization is 409 uniqueness (case-sensitive: a plain unique index). */
const translateUnique = (e: unknown, externalId: string | null): never => {
  if (isUniqueViolation(e, EXTERNAL_ID_KEY)) {
    throw new GroupError("externalIdTaken", `a group with externalId ${JSON.stringify(externalId)} already exists`);
  }
  throw e;
};

/** `lock` takes the row for update, so concurrent changes of one group apply one after the other. */
export async function findGroup(db: Executor, orgId: string, id: string, lock = false): Promise<Group | undefined> {
  const query = db.selectFrom("directory_groups").selectAll().where("organization_id", "=", orgId).where("id", "=", id);
  // GET /Groups/{id} reads through a named prepared statement (storage/prepared.ts); the locking read of a write
  // stays as it was.
  const row = lock ? await query.forUpdate().executeTakeFirst() : (await runPrepared(db, GROUP_BY_ID, query)).rows[0];
  return row === undefined ? undefined : toGroup(row);
}

/**
 * The group a PATCH/PUT starts from, locked until the transaction ends (a prepared statement). FOR NO KEY UPDATE is
 * the lock its UPDATE takes anyway: it does not block the foreign-key checks of requests adding this group elsewhere.
 */
export async function lockGroup(db: Executor, orgId: string, id: string): Promise<Group | undefined> {
  const { rows } = await GROUP_FOR_UPDATE.sql<Selectable<DirectoryGroupsTable>>`select * from directory_groups
    where organization_id = ${orgId} and id = ${id} for no key update`.execute(db);
  const [row] = rows;
  return row === undefined ? undefined : toGroup(row);
}

/**
 * The group a DELETE starts from and the groups that contain it, locked together in id order (as every statement
 * that locks several group rows does, so a user deletion touching the same groups never waits in the opposite order).
 */
export async function lockGroupAndParents(db: Executor, orgId: string, id: string): Promise<Group | undefined> {
  const { rows } = await sql<Selectable<DirectoryGroupsTable>>`select * from directory_groups
    where organization_id = ${orgId}
      and (id = ${id}
        or id in (select group_id from group_group_members where organization_id = ${orgId} and member_group_id = ${id}))
    order by id
    for no key update`.execute(db);
  const row = rows.find((r) => r.id === id);
  return row === undefined ? undefined : toGroup(row);
}

export async function insertGroup(
  db: Executor,
  orgId: string,
  row: { id: string; displayName: string; externalId: string | null; extensions?: GroupExtensions | null; now: Date },
): Promise<Group> {
  try {
    const inserted = await db
      .insertInto("directory_groups")
      .values({
        id: row.id,
        organization_id: orgId,
        display_name: row.displayName,
        external_id: row.externalId,
        extensions: extensionsJson(row.extensions),
        created_at: row.now,
        updated_at: row.now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toGroup(inserted);
  } catch (e) {
    return translateUnique(e, row.externalId);
  }
}

export async function updateGroup(
  db: Executor,
  orgId: string,
  id: string,
  row: { displayName: string; externalId: string | null; extensions: GroupExtensions | null; now: Date },
): Promise<Group> {
  try {
    const { rows } = await GROUP_UPDATE.sql<Selectable<DirectoryGroupsTable>>`update directory_groups
      set display_name = ${row.displayName}, external_id = ${row.externalId},
        extensions = ${extensionsJson(row.extensions)}::jsonb, updated_at = ${row.now}, version = version + 1
      where organization_id = ${orgId} and id = ${id}
      returning *`.execute(db);
    const [updated] = rows;
    if (updated === undefined) throw new Error(`group ${id} vanished under its row lock`);
    return toGroup(updated);
  } catch (e) {
    return translateUnique(e, row.externalId);
  }
}

/** Deletes the group; its memberships (both ways) go with it by FK cascade. */
export async function deleteGroup(db: Executor, orgId: string, id: string): Promise<Group | undefined> {
  const row = await db
    .deleteFrom("directory_groups")
    .where("organization_id", "=", orgId)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
  return row === undefined ? undefined : toGroup(row);
}

/**
 * The groups that contain `id` directly, marked modified now: they lose a member when `id` is deleted. Their rows
 * are locked in id order (already held after lockGroupAndParents).
 */
export async function touchParentsOf(db: Executor, orgId: string, id: string, now: Date): Promise<Group[]> {
  const { rows } = await sql<Selectable<DirectoryGroupsTable>>`
    with parents as (
      select g.id from directory_groups g
      where g.organization_id = ${orgId}
        and g.id in (select group_id from group_group_members where organization_id = ${orgId} and member_group_id = ${id})
      order by g.id
      for no key update
    )
    update directory_groups g set updated_at = ${now}, version = g.version + 1
    from parents where g.id = parents.id
    returning g.*`.execute(db);
  return rows.map(toGroup);
}

type GroupSelect = SelectQueryBuilder<Database, "directory_groups", Selectable<DirectoryGroupsTable>>;

/** `displayName` matches case-insensitively (index on lower(display_name)); externalId exactly. */
function filtered(db: Executor, orgId: string, filter: GroupFilter | undefined): GroupSelect {
  const base = db.selectFrom("directory_groups").selectAll().where("organization_id", "=", orgId);
  if (filter === undefined) return base;
  if (filter.attribute === "externalId") return base.where("external_id", "=", filter.value);
  if (filter.attribute === "extension") {
    // One index for every tenant's Group extension attributes: group_extension_values_lookup_idx.
    return base.where("id", "in", indexedMatches(GROUP_EXTENSION_INDEX, orgId, filter.key, filter.value));
  }
  return base.where(sql<string>`lower(display_name)`, "=", sql<string>`lower(${filter.value})`);
}

/**
 * One page in id order. Offset pages use OFFSET on the (organization_id, id) index; cursor pages are a
 * keyset (`id > last`) on the same index, so their cost does not grow with depth.
 */
export function pageQuery(db: Executor, orgId: string, filter: GroupFilter | undefined, page: GroupPage): GroupSelect {
  const query = filtered(db, orgId, filter).orderBy("id").limit(page.limit);
  if (page.kind === "offset") return query.offset(page.offset);
  return page.afterId === undefined ? query : query.where("id", ">", page.afterId);
}

/** Unfiltered: the organization's group counter (0007-list-reads), a few rows whatever its size. */
export function countQuery(db: Executor, orgId: string, filter: GroupFilter | undefined) {
  if (filter === undefined) return organizationTotal(db, orgId, "groups");
  return filtered(db, orgId, filter)
    .clearSelect()
    .select((eb) => eb.fn.countAll<number>().as("total"));
}

export async function listGroups(
  db: Executor,
  orgId: string,
  filter: GroupFilter | undefined,
  page: GroupPage,
): Promise<{ rows: Group[]; total?: number }> {
  if (page.kind === "cursor") {
    return { rows: (await pageQuery(db, orgId, filter, page).execute()).map(toGroup) };
  }
  const [rows, count] = await Promise.all([
    page.limit === 0 ? Promise.resolve([]) : pageQuery(db, orgId, filter, page).execute(),
    countQuery(db, orgId, filter).executeTakeFirstOrThrow(),
  ]);
  return { rows: rows.map(toGroup), total: Number(count.total) };
}
