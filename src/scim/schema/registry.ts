import { COMMON_ATTRIBUTES } from "./common.js";
import { ENTERPRISE_USER_SCHEMA_DEFINITION } from "./enterprise-user.js";
import { GROUP_SCHEMA_DEFINITION } from "./group.js";
import type { AttributeDefinition, ResourceTypeDefinition, SchemaDefinition } from "./types.js";
import { USER_SCHEMA_DEFINITION } from "./user.js";

export { COMMON_ATTRIBUTES } from "./common.js";

export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const ENTERPRISE_USER_SCHEMA = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";

export type ResourceName = "User" | "Group";

/** Spec 2.6: /Schemas lists exactly these, addressed by URN. */
export const SCHEMAS: readonly SchemaDefinition[] = [
  USER_SCHEMA_DEFINITION,
  ENTERPRISE_USER_SCHEMA_DEFINITION,
  GROUP_SCHEMA_DEFINITION,
];

export const RESOURCE_TYPES: readonly ResourceTypeDefinition[] = [
  {
    id: "User",
    name: "User",
    endpoint: "/Users",
    description: "User Account",
    schema: USER_SCHEMA,
    schemaExtensions: [{ schema: ENTERPRISE_USER_SCHEMA, required: false }],
  },
  { id: "Group", name: "Group", endpoint: "/Groups", description: "Group", schema: GROUP_SCHEMA, schemaExtensions: [] },
];

export interface ResolvedAttribute {
  /** Canonical URN of the schema the attribute belongs to; common attributes belong to the core schema. */
  readonly schema: string;
  readonly attribute: AttributeDefinition;
  readonly sub?: AttributeDefinition;
  /** Attribute name in the registry's spelling, e.g. "name.givenName" (never URN-qualified). */
  readonly canonicalName: string;
}

const lower = (s: string): string => s.toLowerCase();

const findSchema = (urn: string): SchemaDefinition | undefined => SCHEMAS.find((s) => lower(s.id) === lower(urn));

export const resourceTypeOf = (resource: ResourceName): ResourceTypeDefinition => {
  const found = RESOURCE_TYPES.find((r) => r.id === resource);
  if (found === undefined) throw new Error(`unknown resource type ${resource}`);
  return found;
};

/** The core schema URN of a resource type. */
export const coreSchemaOf = (resource: ResourceName): string => resourceTypeOf(resource).schema;

/** Extension schema URNs of a resource type, in registry order. */
export const extensionSchemasOf = (resource: ResourceName): readonly string[] =>
  resourceTypeOf(resource).schemaExtensions.map((e) => e.schema);

/** Core schema first, then the extensions. */
export const schemasFor = (resource: ResourceName): readonly SchemaDefinition[] => {
  const type = resourceTypeOf(resource);
  return [type.schema, ...type.schemaExtensions.map((e) => e.schema)].flatMap((urn) => findSchema(urn) ?? []);
};

/** The registry's spelling of a schema URN of this resource type, or undefined; URNs compare case-insensitively. */
export const canonicalSchemaUrn = (resource: ResourceName, urn: string): string | undefined =>
  schemasFor(resource).find((s) => lower(s.id) === lower(urn))?.id;

export const isKnownSchema = (resource: ResourceName, urn: string): boolean =>
  canonicalSchemaUrn(resource, urn) !== undefined;

/** Splits "urn:…:User:name.givenName" into the URN and the attribute part (RFC 7644 §3.10: the name follows the last colon). */
export const splitSchemaPrefix = (path: string): { readonly urn: string | undefined; readonly name: string } => {
  if (!lower(path).startsWith("urn:")) return { urn: undefined, name: path };
  const colon = path.lastIndexOf(":");
  return { urn: path.slice(0, colon), name: path.slice(colon + 1) };
};

export const findAttribute = (
  attributes: readonly AttributeDefinition[],
  name: string,
): AttributeDefinition | undefined => attributes.find((a) => lower(a.name) === lower(name));

/** Attributes addressable under a schema of the resource: the core schema also carries the common ones. */
const attributesIn = (resource: ResourceName, schema: SchemaDefinition): readonly AttributeDefinition[] =>
  schema.id === coreSchemaOf(resource) ? [...schema.attributes, ...COMMON_ATTRIBUTES] : schema.attributes;

/**
 * Resolves `attr`, `attr.sub` and URN-qualified forms case-insensitively (RFC 7643 §2.1). An unqualified name is
 * looked up in the core schema first, then in the extensions (Entra sends "manager" for the enterprise manager).
 */
export const resolveAttribute = (resource: ResourceName, path: string): ResolvedAttribute | undefined => {
  const { urn, name } = splitSchemaPrefix(path);
  let candidates: readonly SchemaDefinition[] = schemasFor(resource);
  if (urn !== undefined) {
    const schema = canonicalSchemaUrn(resource, urn);
    const definition = schema === undefined ? undefined : findSchema(schema);
    if (definition === undefined) return undefined;
    candidates = [definition];
  }
  const parts = name.split(".");
  const [head, subName, ...rest] = parts;
  if (head === undefined || head === "" || subName === "" || rest.length > 0) return undefined;
  for (const schema of candidates) {
    const attribute = findAttribute(attributesIn(resource, schema), head);
    if (attribute === undefined) continue;
    if (subName === undefined) return { schema: schema.id, attribute, canonicalName: attribute.name };
    const sub = findAttribute(attribute.subAttributes ?? [], subName);
    if (sub === undefined) return undefined;
    return { schema: schema.id, attribute, sub, canonicalName: `${attribute.name}.${sub.name}` };
  }
  return undefined;
};
