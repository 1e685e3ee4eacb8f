import { sql, type Transaction } from "kysely";
import type { Database } from "../storage/schema.js";
import type { ExtensionValue } from "./identities/extension-values.js";
import { type ExtensionDeclaration, type IndexedAttribute, newlyIndexed } from "./scim-clients/extensions.js";

/**
 * Where a resource type's filterable and unique extension values are indexed (0010-scim-extensions for users,
 * 0014-group-extensions for groups: one side table each, same shape), and where its rows hold the extension
 * objects keyed by schema URN.
 */
export interface ExtensionIndex {
  readonly table: "identity_extension_values" | "group_extension_values";
  readonly owner: "identity_id" | "group_id";
  readonly source: "identities" | "directory_groups";
  readonly document: "scim" | "extensions";
}

export const IDENTITY_EXTENSION_INDEX: ExtensionIndex = {
  table: "identity_extension_values",
  owner: "identity_id",
  source: "identities",
  document: "scim",
};

export const GROUP_EXTENSION_INDEX: ExtensionIndex = {
  table: "group_extension_values",
  owner: "group_id",
  source: "directory_groups",
  document: "extensions",
};

/**
 * Replaces a resource's rows of the index for the attributes `keys` (those the writing client indexes; other
 * clients' rows stay). A taken unique value fails with the table's `…_unique_key`.
 */
export async function replaceIndexedValues(
  trx: Transaction<Database>,
  index: ExtensionIndex,
  orgId: string,
  ownerId: string,
  keys: readonly string[],
  values: readonly ExtensionValue[],
): Promise<void> {
  if (keys.length > 0) {
    await sql`delete from ${sql.table(index.table)}
      where ${sql.ref(index.owner)} = ${ownerId} and attribute = any(${keys}::text[])`.execute(trx);
  }
  if (values.length === 0) return;
  await sql`insert into ${sql.table(index.table)} (${sql.ref(index.owner)}, organization_id, attribute, value, is_unique)
    select ${ownerId}, ${orgId}, v.attribute, v.value, v.is_unique
    from unnest(${values.map((x) => x.attribute)}::text[], ${values.map((x) => x.value)}::text[],
      ${values.map((x) => x.unique)}::boolean[]) as v(attribute, value, is_unique)`.execute(trx);
}

/**
 * Rebuilds the index of an organization for attributes a client newly indexes (or indexes differently), from the
 * stored documents: one statement per attribute over the organization's resources. A value that several resources
 * already repeat keeps its first holder only (ON CONFLICT DO NOTHING on the unique index).
 */
async function reindexAttributes(
  trx: Transaction<Database>,
  index: ExtensionIndex,
  orgId: string,
  attributes: readonly IndexedAttribute[],
): Promise<void> {
  const document = sql.ref(`d.${index.document}`);
  for (const a of attributes) {
    await sql`delete from ${sql.table(index.table)} where organization_id = ${orgId} and attribute = ${a.key}`.execute(
      trx,
    );
    const raw = sql<string>`${document} -> ${a.schema}::text ->> ${a.name}::text`;
    await sql`insert into ${sql.table(index.table)} (${sql.ref(index.owner)}, organization_id, attribute, value, is_unique)
      select d.id, d.organization_id, ${a.key}, ${a.caseExact ? raw : sql`lower(${raw})`}, ${a.unique}
      from ${sql.table(index.source)} d
      where d.organization_id = ${orgId} and jsonb_typeof(${document} -> ${a.schema}::text -> ${a.name}::text) = 'string'
        and ${raw} <> ''
      order by d.id
      on conflict do nothing`.execute(trx);
  }
}

/**
 * After a client's declaration changed from `before` to `after`: indexes the users' and groups' values of the
 * attributes that became filterable or unique (or changed case rule) (docs/scim-extensions.md).
 */
export async function reindexDeclared(
  trx: Transaction<Database>,
  orgId: string,
  before: readonly ExtensionDeclaration[],
  after: readonly ExtensionDeclaration[],
): Promise<void> {
  await reindexAttributes(trx, IDENTITY_EXTENSION_INDEX, orgId, newlyIndexed(before, after, "User"));
  await reindexAttributes(trx, GROUP_EXTENSION_INDEX, orgId, newlyIndexed(before, after, "Group"));
}

/** The ids of an organization's resources whose indexed attribute `key` holds `value` (served by `…_lookup_idx`). */
export const indexedMatches = (index: ExtensionIndex, orgId: string, key: string, value: string) =>
  sql<string>`(select x.${sql.ref(index.owner)} from ${sql.table(index.table)} x
    where x.organization_id = ${orgId} and x.attribute = ${key} and x.value = ${value})`;
