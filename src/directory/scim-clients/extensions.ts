/**
 * Custom SCIM schema extensions a SCIM client declares (docs/scim-extensions.md): the shape stored with the client
 * and the rules a declaration must meet. The SCIM adapter compiles them into the client's schema registry.
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
/** Only these may be filterable or unique: the filter grammar takes string literals, compared as text. */
const INDEXABLE_TYPES: readonly ExtensionAttributeType[] = ["string", "reference"];

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

export class ExtensionDeclarationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ExtensionDeclarationError";
  }
}

/** Schema URNs a declaration may neither repeat nor nest under (RFC 7643 §8.7, RFC 7644 §3.1 messages). */
const RESERVED_URNS = [
  "urn:ietf:params:scim:schemas:core:2.0:User",
  "urn:ietf:params:scim:schemas:core:2.0:Group",
  "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User",
  "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig",
  "urn:ietf:params:scim:schemas:core:2.0:ResourceType",
  "urn:ietf:params:scim:schemas:core:2.0:Schema",
  "urn:ietf:params:scim:api:messages:2.0",
];

/**
 * RFC 8141 NID and NSS, without the optional r/q/f components: the attribute name follows the last colon of a
 * qualified path (RFC 7644 §3.10), so the URN itself must not end in a colon.
 */
export const URN_PATTERN =
  "^[Uu][Rr][Nn]:[A-Za-z0-9][A-Za-z0-9-]{0,30}[A-Za-z0-9]:[A-Za-z0-9()+,\\-.=@;$_!*'%/:]*[A-Za-z0-9()+,\\-.=@;$_!*'%/]$";
/** RFC 7643 §2.1: ATTRNAME = ALPHA *(nameChar), nameChar = "-" / "_" / DIGIT / ALPHA. */
export const ATTRNAME_PATTERN = "^[A-Za-z][A-Za-z0-9_-]*$";

const fail = (message: string): never => {
  throw new ExtensionDeclarationError(message);
};
const lower = (s: string) => s.toLowerCase();

/** `a` equals `b` or one is a prefix of the other up to a colon: paths under either would be ambiguous. */
const overlaps = (a: string, b: string): boolean => {
  const [x, y] = [lower(a), lower(b)];
  return x === y || x.startsWith(`${y}:`) || y.startsWith(`${x}:`);
};

/**
 * An attribute as the admin API's schema has already checked it (src/admin/schemas/scim-client-extensions.ts):
 * types, lengths, patterns, enumerations, counts and sizes. Absent and null mean "the default".
 */
export interface SubAttributeInput {
  readonly name: string;
  readonly type?: ExtensionAttributeType | null;
  readonly multiValued?: boolean | null;
  readonly description?: string | null;
  readonly required?: boolean | null;
  readonly caseExact?: boolean | null;
  readonly mutability?: ExtensionAttribute["mutability"] | null;
  readonly returned?: ExtensionAttribute["returned"] | null;
  readonly uniqueness?: ExtensionAttribute["uniqueness"] | null;
  readonly filterable?: boolean | null;
  readonly canonicalValues?: readonly string[] | null;
  readonly referenceTypes?: readonly string[] | null;
  /** Refused on a sub-attribute, by name (a sub-attribute cannot be complex): the schema lets it through. */
  readonly subAttributes?: unknown;
}

export interface AttributeInput extends SubAttributeInput {
  readonly subAttributes?: readonly SubAttributeInput[] | null;
}

export interface DeclarationInput {
  readonly schema: string;
  readonly name: string;
  readonly description?: string | null;
  readonly resource?: ExtensionResource | null;
  readonly required?: boolean | null;
  readonly attributes: readonly AttributeInput[];
}

/** The rules that span fields, which a schema does not say: name clashes, what may be indexed, complex shapes. */
function attributesOf(raw: readonly SubAttributeInput[], where: string, nested: boolean): ExtensionAttribute[] {
  const seen = new Set<string>();
  return raw.map((item, i) => {
    const at = `${where}[${i}]`;
    const { name } = item;
    if (seen.has(lower(name))) fail(`${at}.name ${name} is declared twice (names are case-insensitive)`);
    seen.add(lower(name));
    const type = item.type ?? "string";
    const uniqueness = item.uniqueness ?? "none";
    const multiValued = item.multiValued === true;
    const filterable = item.filterable === true || uniqueness === "server";
    if (filterable && (nested || multiValued || !INDEXABLE_TYPES.includes(type))) {
      fail(`${at}: only single-valued top-level string or reference attributes may be filterable or unique`);
    }
    let subAttributes: ExtensionAttribute[] | undefined;
    if (type === "complex") {
      if (nested) fail(`${at}: a sub-attribute cannot be complex (RFC 7643 §2.3.8)`);
      const subs: readonly SubAttributeInput[] = Array.isArray(item.subAttributes) ? item.subAttributes : [];
      if (subs.length === 0) fail(`${at}.subAttributes must be a non-empty array`);
      subAttributes = attributesOf(subs, `${at}.subAttributes`, true);
    } else if (item.subAttributes !== undefined && item.subAttributes !== null) {
      fail(`${at}.subAttributes is only for complex attributes`);
    }
    return {
      name,
      type,
      multiValued,
      description: item.description ?? "",
      required: item.required === true,
      caseExact: item.caseExact === true,
      mutability: item.mutability ?? "readWrite",
      returned: item.returned ?? "default",
      uniqueness,
      filterable,
      ...(item.canonicalValues ? { canonicalValues: item.canonicalValues } : {}),
      ...(item.referenceTypes ? { referenceTypes: item.referenceTypes } : {}),
      ...(subAttributes === undefined ? {} : { subAttributes }),
    };
  });
}

/**
 * A client's `extensions` as stored, with the defaults of RFC 7643 §2.2 filled in, from a list the admin API's schema
 * has checked; throws ExtensionDeclarationError for a rule that spans fields (docs/scim-extensions.md).
 */
export function parseExtensions(raw: readonly DeclarationInput[] | null | undefined): ExtensionDeclaration[] {
  const declared: ExtensionDeclaration[] = [];
  for (const [i, item] of (raw ?? []).entries()) {
    const at = `extensions[${i}]`;
    const { schema } = item;
    const reserved = RESERVED_URNS.find((r) => overlaps(r, schema));
    if (reserved !== undefined) fail(`${at}.schema ${schema} clashes with the standard schema ${reserved}`);
    const twin = declared.find((d) => overlaps(d.schema, schema));
    if (twin !== undefined) fail(`${at}.schema ${schema} clashes with the extension ${twin.schema} of this client`);
    declared.push({
      schema,
      name: item.name,
      description: item.description ?? "",
      resource: item.resource ?? "User",
      required: item.required === true,
      attributes: attributesOf(item.attributes, `${at}.attributes`, false),
    });
  }
  return declared;
}

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
