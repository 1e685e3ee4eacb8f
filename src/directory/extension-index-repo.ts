import { type RawBuilder, sql, type Transaction } from "kysely";
import type { Database } from "../storage/schema.js";
import type { ExtensionValue } from "./identities/extension-values.js";
import { type CollidingValue, ExtensionValuesCollideError } from "./scim-clients/errors.js";
import {
  type ExtensionDeclaration,
  type IndexedAttribute,
  indexedAttributesOf,
  newlyIndexed,
  storedExtensions,
} from "./scim-clients/extensions.js";

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
 * The digest an index row is keyed by (0018-extension-limits): SHA-256 of the value's UTF-8 bytes, so a value of
 * any length can be unique and eq-filtered (a B-tree entry of the value itself fails past ~2 700 bytes).
 */
export const digestOf = (value: RawBuilder<string> | string) => sql<Uint8Array>`sha256(convert_to(${value}, 'UTF8'))`;

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
  await sql`insert into ${sql.table(index.table)}
      (${sql.ref(index.owner)}, organization_id, attribute, value, value_digest, is_unique)
    select ${ownerId}, ${orgId}, v.attribute, v.value, ${digestOf(sql.ref("v.value"))}, v.is_unique
    from unnest(${values.map((x) => x.attribute)}::text[], ${values.map((x) => x.value)}::text[],
      ${values.map((x) => x.unique)}::boolean[]) as v(attribute, value, is_unique)`.execute(trx);
}

/** At most this many colliding values are named in a refusal. */
const MAX_NAMED_COLLISIONS = 5;

/**
 * Rebuilds the index of an organization for attributes a client newly indexes (or indexes differently), from the
 * stored documents, in one statement: one pass over the organization's resources, reading only the members of the
 * declared extension objects. When a newly unique attribute's value is already held by several resources nothing is
 * written and the collisions are returned (the caller refuses the declaration, and its transaction rolls back).
 */
async function reindexAttributes(
  trx: Transaction<Database>,
  index: ExtensionIndex,
  orgId: string,
  attributes: readonly IndexedAttribute[],
): Promise<readonly CollidingValue[]> {
  if (attributes.length === 0) return [];
  const keys = attributes.map((a) => a.key);
  await sql`delete from ${sql.table(index.table)}
    where organization_id = ${orgId} and attribute = any(${keys}::text[])`.execute(trx);
  const document = sql.ref(`d.${index.document}`);
  const object = sql`case when jsonb_typeof(${document} -> s.schema) = 'object' then ${document} -> s.schema
    else '{}'::jsonb end`;
  const { rows } = await sql<{ attribute: string; ids: string[] }>`
    with a (schema, name, key, case_exact, is_unique) as (
      select * from unnest(${attributes.map((a) => a.schema)}::text[], ${attributes.map((a) => a.name)}::text[],
        ${keys}::text[], ${attributes.map((a) => a.caseExact)}::boolean[], ${attributes.map((a) => a.unique)}::boolean[])
    ), s (schema) as (select distinct schema from a),
    vals as materialized (
      select d.id as owner, a.key, a.is_unique,
        case when a.case_exact then e.value #>> '{}' else lower(e.value #>> '{}') end as value
      from ${sql.table(index.source)} d cross join s
        cross join lateral jsonb_each(${object}) as e
        join a on a.schema = s.schema and a.name = e.key
      where d.organization_id = ${orgId} and jsonb_typeof(e.value) = 'string' and e.value #>> '{}' <> ''
    ), clash as (
      select key as attribute, array_agg(owner::text order by owner) as ids from vals where is_unique
      group by key, ${digestOf(sql.ref("value"))} having count(*) > 1
      order by 1, 2 limit ${MAX_NAMED_COLLISIONS}
    ), ins as (
      insert into ${sql.table(index.table)}
        (${sql.ref(index.owner)}, organization_id, attribute, value, value_digest, is_unique)
      select owner, ${orgId}, key, value, ${digestOf(sql.ref("value"))}, is_unique from vals
      where not exists (select 1 from clash)
    )
    select attribute, ids from clash`.execute(trx);
  return rows.map((r) => {
    const a = attributes.find((x) => x.key === r.attribute);
    return { attribute: a === undefined ? r.attribute : `${a.schema}:${a.name}`, ids: r.ids };
  });
}

/**
 * After a client's declaration changed from `before` to `after` (or was created: `before` is empty): indexes the
 * users' and groups' values of the attributes that became filterable or unique (or changed case rule), in the
 * caller's transaction, so they hold from the first request (docs/scim-extensions.md). Existing values that repeat
 * for a newly unique attribute refuse the declaration (ExtensionValuesCollideError).
 */
export async function reindexDeclared(
  trx: Transaction<Database>,
  orgId: string,
  clientId: string,
  before: readonly ExtensionDeclaration[],
  after: readonly ExtensionDeclaration[],
): Promise<void> {
  if (indexedAttributesOf(after, "User").length + indexedAttributesOf(after, "Group").length === 0) return;
  const others = await otherDeclarations(trx, orgId, clientId);
  for (const [resource, index] of [
    ["User", IDENTITY_EXTENSION_INDEX],
    ["Group", GROUP_EXTENSION_INDEX],
  ] as const) {
    const changed = newlyIndexed(before, after, resource);
    if (changed.length === 0) continue;
    // A value another client of the organization keeps unique stays unique when this one only filters on it.
    const uniqueElsewhere = new Set(
      others
        .flatMap((o) => indexedAttributesOf(o, resource))
        .filter((a) => a.unique)
        .map((a) => a.key),
    );
    const attributes = changed.map((a) => (uniqueElsewhere.has(a.key) ? { ...a, unique: true } : a));
    const collisions = await reindexAttributes(trx, index, orgId, attributes);
    if (collisions.length > 0) throw new ExtensionValuesCollideError(resource, collisions);
  }
}

/** The declarations of the organization's other clients (read only when this one indexes something). */
async function otherDeclarations(
  trx: Transaction<Database>,
  orgId: string,
  clientId: string,
): Promise<readonly (readonly ExtensionDeclaration[])[]> {
  const rows = await trx
    .selectFrom("scim_clients")
    .select("extensions")
    .where("organization_id", "=", orgId)
    .where("client_id", "<>", clientId)
    .where("extensions_bytes", ">", 0)
    .execute();
  return rows.map((r) => storedExtensions(r.extensions));
}

/** The ids of an organization's resources whose indexed attribute `key` holds `value` (served by `…_lookup_idx`). */
export const indexedMatches = (index: ExtensionIndex, orgId: string, key: string, value: string) =>
  sql<string>`(select x.${sql.ref(index.owner)} from ${sql.table(index.table)} x
    where x.organization_id = ${orgId} and x.attribute = ${key} and x.value_digest = ${digestOf(value)})`;
