/**
 * Custom SCIM schema extensions a SCIM client declares (docs/scim-extensions.md): the shape stored with the client,
 * its limits, and which attributes the directory indexes. The SCIM grammar a declaration must meet is the SCIM
 * side's (scim/schema/extension-declarations.ts); the SCIM adapter compiles declarations into the client's schema
 * registry.
 */

/** Limits of a declaration (docs/scim-extensions.md "Limits"); the admin API's schema enforces them. */
export const MAX_EXTENSIONS_PER_CLIENT = 10;
export const MAX_ATTRIBUTES_PER_EXTENSION = 100;
export const MAX_SUB_ATTRIBUTES = 100;
/**
 * Attributes of all a client's extensions together, sub-attributes included: what /Schemas lists and every write
 * validates against. The per-extension limits alone allowed 10 × 100 × 100.
 */
export const MAX_TOTAL_ATTRIBUTES = 500;
/** The declaration as JSON (UTF-8 bytes), as sent: bounds /Schemas, a cached client and an admin list page. */
export const MAX_DECLARATION_BYTES = 256 * 1024;
export const MAX_URN_LENGTH = 256;
export const MAX_EXTENSION_NAME_LENGTH = 256;
export const MAX_ATTRIBUTE_NAME_LENGTH = 128;
export const MAX_DESCRIPTION_LENGTH = 1024;
export const MAX_CANONICAL_VALUES = 100;
export const MAX_CANONICAL_VALUE_LENGTH = 256;

export const EXTENSION_ATTRIBUTE_TYPES = [
  "string",
  "boolean",
  "integer",
  "decimal",
  "dateTime",
  "reference",
  "complex",
] as const;
export type ExtensionAttributeType = (typeof EXTENSION_ATTRIBUTE_TYPES)[number];
export const MUTABILITIES = ["readOnly", "readWrite", "immutable", "writeOnly"] as const;
export const RETURNED = ["always", "never", "default", "request"] as const;
/** "global" would span every organization of the service; tenants must not see each other's values. */
export const UNIQUENESS = ["none", "server"] as const;

export interface ExtensionAttribute {
  readonly name: string;
  readonly type: ExtensionAttributeType;
  readonly multiValued: boolean;
  readonly description: string;
  readonly required: boolean;
  readonly caseExact: boolean;
  readonly mutability: (typeof MUTABILITIES)[number];
  readonly returned: (typeof RETURNED)[number];
  readonly uniqueness: (typeof UNIQUENESS)[number];
  /** Not an RFC 7643 characteristic: whether `eq` filters may use it (implied by uniqueness "server"). */
  readonly filterable: boolean;
  readonly canonicalValues?: readonly string[];
  readonly referenceTypes?: readonly string[];
  readonly subAttributes?: readonly ExtensionAttribute[];
}

export interface ExtensionDeclaration {
  readonly schema: string;
  readonly name: string;
  readonly description: string;
  readonly resource: ExtensionResource;
  /** RFC 7643 §6 schemaExtensions.required: every resource of the type must carry the extension. */
  readonly required: boolean;
  readonly attributes: readonly ExtensionAttribute[];
}

/** The resource type an extension adds to (RFC 7643 §6 schemaExtensions). */
export type ExtensionResource = (typeof EXTENSION_RESOURCES)[number];
export const EXTENSION_RESOURCES = ["User", "Group"] as const;

/** What the client does with a body keyed by a schema URN it has not declared. */
export type UnknownExtensions = "reject" | "store";

/** An extension attribute whose values are indexed (filterable or unique), as the side tables of users and groups key it. */
export interface IndexedAttribute {
  readonly schema: string;
  readonly name: string;
  /** `<schema>:<name>`, lower-cased: the side table's attribute column. */
  readonly key: string;
  readonly caseExact: boolean;
  readonly unique: boolean;
}

const lower = (s: string) => s.toLowerCase();

/** A stored declaration as read back (written only through parseExtensions). */
export const storedExtensions = (raw: unknown): readonly ExtensionDeclaration[] =>
  Array.isArray(raw) ? (raw as ExtensionDeclaration[]) : [];

/** The attributes of a resource type's extensions whose values its side table indexes, in declaration order. */
export function indexedAttributesOf(
  extensions: readonly ExtensionDeclaration[],
  resource: ExtensionResource = "User",
): readonly IndexedAttribute[] {
  return extensions.flatMap((e) =>
    e.resource !== resource
      ? []
      : e.attributes
          .filter((a) => a.filterable || a.uniqueness === "server")
          .map((a) => ({
            schema: e.schema,
            name: a.name,
            key: lower(`${e.schema}:${a.name}`),
            caseExact: a.caseExact,
            unique: a.uniqueness === "server",
          })),
  );
}

/**
 * The attributes of `resource` that `after` indexes and `before` did not (or indexed differently): their values
 * written before the change are indexed when the declaration changes (docs/scim-extensions.md).
 */
export function newlyIndexed(
  before: readonly ExtensionDeclaration[],
  after: readonly ExtensionDeclaration[],
  resource: ExtensionResource,
): readonly IndexedAttribute[] {
  const old = indexedAttributesOf(before, resource);
  return indexedAttributesOf(after, resource).filter(
    (a) => !old.some((o) => o.key === a.key && o.caseExact === a.caseExact && o.unique === a.unique),
  );
}
