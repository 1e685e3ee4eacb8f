import { COMMON_ATTRIBUTES } from "./common.js";
import { ENTERPRISE_USER_SCHEMA_DEFINITION } from "./enterprise-user.js";
import { GROUP_SCHEMA_DEFINITION } from "./group.js";
import type { AttributeDefinition, ResourceTypeDefinition, SchemaDefinition } from "./types.js";
import { USER_SCHEMA_DEFINITION } from "./user.js";

export { COMMON_ATTRIBUTES } from "./common.js";

export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const ENTERPRISE_USER_SCHEMA = ENTERPRISE_USER_SCHEMA_DEFINITION.id;
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
/** The discovery schemas (RFC 7643 §5–7) and the prefix of every message URN (RFC 7644 §3.1). */
export const SERVICE_PROVIDER_CONFIG_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig";
export const RESOURCE_TYPE_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:ResourceType";
export const SCHEMA_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Schema";
export const MESSAGES_URN = "urn:ietf:params:scim:api:messages:2.0";

export type ResourceName = "User" | "Group";

/** /Schemas lists exactly these, addressed by URN. */
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

/** An extension schema a registry adds to a resource type beside the standard ones. */
export interface RegisteredExtension {
  readonly resource: ResourceName;
  readonly schema: SchemaDefinition;
  readonly required: boolean;
}

const lower = (s: string): string => s.toLowerCase();

/**
 * The resource contract one SCIM client sees: the standard schemas, plus the custom extensions it declared
 * (docs/scim-extensions.md). Discovery, validation, PATCH paths, projection and filters all read it. Derived
 * tables (a rendering order, a validation plan) are memoized on the instance, which lives as long as the client's
 * cache entry; clients without extensions share CORE_REGISTRY.
 */
export class SchemaRegistry {
  readonly schemas: readonly SchemaDefinition[];
  readonly resourceTypes: readonly ResourceTypeDefinition[];
  /** Keep the objects of undeclared schema URNs verbatim instead of refusing them (docs/scim-extensions.md). */
  readonly storeUnknown: boolean;
  readonly #byUrn: Map<string, SchemaDefinition>;
  readonly #perResource: Map<ResourceName, readonly SchemaDefinition[]>;
  readonly #memo = new Map<string, unknown>();

  constructor(extensions: readonly RegisteredExtension[] = [], storeUnknown = false) {
    this.schemas = [...SCHEMAS, ...extensions.map((e) => e.schema)];
    this.resourceTypes = RESOURCE_TYPES.map((rt) => {
      const added = extensions.filter((e) => e.resource === rt.id);
      if (added.length === 0) return rt;
      return {
        ...rt,
        schemaExtensions: [
          ...rt.schemaExtensions,
          ...added.map((e) => ({ schema: e.schema.id, required: e.required })),
        ],
      };
    });
    this.storeUnknown = storeUnknown;
    this.#byUrn = new Map(this.schemas.map((s) => [lower(s.id), s]));
    this.#perResource = new Map(
      this.resourceTypes.map((rt) => [
        rt.id,
        [rt.schema, ...rt.schemaExtensions.map((e) => e.schema)].flatMap((urn) => this.#byUrn.get(lower(urn)) ?? []),
      ]),
    );
  }

  /** Whether this registry adds nothing to the standard contract. */
  get isCore(): boolean {
    return this.schemas.length === SCHEMAS.length && !this.storeUnknown;
  }

  findSchema(urn: string): SchemaDefinition | undefined {
    return this.#byUrn.get(lower(urn));
  }

  resourceTypeOf(resource: ResourceName): ResourceTypeDefinition {
    const found = this.resourceTypes.find((r) => r.id === resource);
    if (found === undefined) throw new Error(`unknown resource type ${resource}`);
    return found;
  }

  /** Core schema first, then the extensions. */
  schemasFor(resource: ResourceName): readonly SchemaDefinition[] {
    return this.#perResource.get(resource) ?? [];
  }

  /** A value derived from this registry, computed once. */
  memo<T>(key: string, build: () => T): T {
    if (this.#memo.has(key)) return this.#memo.get(key) as T;
    const value = build();
    this.#memo.set(key, value);
    return value;
  }
}

export const CORE_REGISTRY = new SchemaRegistry();

export const resourceTypeOf = (resource: ResourceName, registry = CORE_REGISTRY): ResourceTypeDefinition =>
  registry.resourceTypeOf(resource);

/** The core schema URN of a resource type. */
export const coreSchemaOf = (resource: ResourceName): string => CORE_REGISTRY.resourceTypeOf(resource).schema;

/** Extension schema URNs of a resource type, in registry order. */
export const extensionSchemasOf = (resource: ResourceName, registry = CORE_REGISTRY): readonly string[] =>
  registry.resourceTypeOf(resource).schemaExtensions.map((e) => e.schema);

/** Core schema first, then the extensions. */
export const schemasFor = (resource: ResourceName, registry = CORE_REGISTRY): readonly SchemaDefinition[] =>
  registry.schemasFor(resource);

/** The registry's spelling of a schema URN of this resource type, or undefined; URNs compare case-insensitively. */
export const canonicalSchemaUrn = (resource: ResourceName, urn: string, registry = CORE_REGISTRY): string | undefined =>
  lookupOf(registry.schemasFor(resource), (s) => s.id)(urn)?.id;

export const isKnownSchema = (resource: ResourceName, urn: string, registry = CORE_REGISTRY): boolean =>
  canonicalSchemaUrn(resource, urn, registry) !== undefined;

/** Splits "urn:…:User:name.givenName" into the URN and the attribute part (RFC 7644 §3.10: the name follows the last colon). */
export const splitSchemaPrefix = (path: string): { readonly urn: string | undefined; readonly name: string } => {
  if (!lower(path).startsWith("urn:")) return { urn: undefined, name: path };
  const colon = path.lastIndexOf(":");
  return { urn: path.slice(0, colon), name: path.slice(colon + 1) };
};

export const findAttribute = (
  attributes: readonly AttributeDefinition[],
  name: string,
): AttributeDefinition | undefined => lookupOf(attributes, (a) => a.name)(name);

/**
 * Case-insensitive lookup by name in a list of definitions, as `list.find` comparing lowercased names would answer
 * (the first match), built once per list: a document's every key is looked up on every PATCH, and lowercasing each
 * candidate's name on each lookup cost more than the rest of canonicalising it. A name spelled as the definition
 * spells it needs no lowercasing. Lists of definitions are never changed in place, and each is looked up by one
 * name only (attributes by `name`, schemas by `id`).
 */
const lookups = new WeakMap<readonly object[], (name: string) => unknown>();

function lookupOf<T extends object>(list: readonly T[], nameOf: (item: T) => string): (name: string) => T | undefined {
  const known = lookups.get(list) as ((name: string) => T | undefined) | undefined;
  if (known !== undefined) return known;
  const byLower = new Map<string, T>();
  for (const item of list) if (!byLower.has(lower(nameOf(item)))) byLower.set(lower(nameOf(item)), item);
  const exact = new Map<string, T>();
  for (const item of list) if (byLower.get(lower(nameOf(item))) === item) exact.set(nameOf(item), item);
  const lookup = (name: string): T | undefined => exact.get(name) ?? byLower.get(lower(name));
  lookups.set(list, lookup);
  return lookup;
}

/** Attributes addressable under a schema of the resource: the core schema also carries the common ones. */
const withCommon = new WeakMap<SchemaDefinition, readonly AttributeDefinition[]>();
export const attributesIn = (resource: ResourceName, schema: SchemaDefinition): readonly AttributeDefinition[] => {
  if (schema.id !== coreSchemaOf(resource)) return schema.attributes;
  let attributes = withCommon.get(schema);
  if (attributes === undefined) {
    attributes = [...schema.attributes, ...COMMON_ATTRIBUTES];
    withCommon.set(schema, attributes);
  }
  return attributes;
};

/**
 * Resolves `attr`, `attr.sub` and URN-qualified forms case-insensitively (RFC 7643 §2.1). An unqualified name is
 * looked up in the core schema first, then in the extensions (Entra sends "manager" for the enterprise manager).
 */
export const resolveAttribute = (
  resource: ResourceName,
  path: string,
  registry = CORE_REGISTRY,
): ResolvedAttribute | undefined => {
  const { urn, name } = splitSchemaPrefix(path);
  let candidates: readonly SchemaDefinition[] = registry.schemasFor(resource);
  if (urn !== undefined) {
    const schema = canonicalSchemaUrn(resource, urn, registry);
    const definition = schema === undefined ? undefined : registry.findSchema(schema);
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
