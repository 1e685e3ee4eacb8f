/**
 * Custom SCIM schema extensions a SCIM client declares (docs/scim-extensions.md): the shape stored with the client
 * and the rules a declaration must meet. The SCIM adapter compiles them into the client's schema registry.
 */

/** Limits of a declaration (docs/scim-extensions.md "Limits"). */
export const MAX_EXTENSIONS_PER_CLIENT = 10;
export const MAX_ATTRIBUTES_PER_EXTENSION = 100;
export const MAX_SUB_ATTRIBUTES = 100;
const MAX_URN_LENGTH = 256;
const MAX_NAME_LENGTH = 256;
const MAX_DESCRIPTION_LENGTH = 1024;
const MAX_CANONICAL_VALUES = 100;

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
const MUTABILITIES = ["readOnly", "readWrite", "immutable", "writeOnly"] as const;
const RETURNED = ["always", "never", "default", "request"] as const;
/** "global" would span every organization of the service; tenants must not see each other's values. */
const UNIQUENESS = ["none", "server"] as const;
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
export type ExtensionResource = "User" | "Group";
const RESOURCES: readonly ExtensionResource[] = ["User", "Group"];

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
const URN_RE =
  /^urn:[A-Za-z0-9][A-Za-z0-9-]{0,30}[A-Za-z0-9]:[A-Za-z0-9()+,\-.=@;$_!*'%/:]*[A-Za-z0-9()+,\-.=@;$_!*'%/]$/i;
/** RFC 7643 §2.1: ATTRNAME = ALPHA *(nameChar), nameChar = "-" / "_" / DIGIT / ALPHA. */
const ATTRNAME_RE = /^[A-Za-z][A-Za-z0-9_-]*$/;

const fail = (message: string): never => {
  throw new ExtensionDeclarationError(message);
};
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const lower = (s: string) => s.toLowerCase();

/** `a` equals `b` or one is a prefix of the other up to a colon: paths under either would be ambiguous. */
const overlaps = (a: string, b: string): boolean => {
  const [x, y] = [lower(a), lower(b)];
  return x === y || x.startsWith(`${y}:`) || y.startsWith(`${x}:`);
};

function only(object: Record<string, unknown>, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(object)) {
    if (!allowed.includes(key)) fail(`${where}: unknown field ${key} (allowed: ${allowed.join(", ")})`);
  }
}

function flag(object: Record<string, unknown>, field: string, where: string): boolean {
  const v = object[field];
  if (v === undefined || v === null) return false;
  if (typeof v !== "boolean") fail(`${where}.${field} must be a boolean`);
  return v === true;
}

function text(object: Record<string, unknown>, field: string, where: string, max: number): string | undefined {
  const v = object[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") return fail(`${where}.${field} must be a string`);
  if (v.length > max) fail(`${where}.${field} must be at most ${max} characters`);
  if (v.includes("\u0000")) fail(`${where}.${field} must not contain NUL characters`);
  return v;
}

function oneOf<T extends string>(
  object: Record<string, unknown>,
  field: string,
  where: string,
  allowed: readonly T[],
  fallback: T,
): T {
  const v = object[field];
  if (v === undefined || v === null) return fallback;
  const found = allowed.find((a) => a === v);
  if (found === undefined) return fail(`${where}.${field} must be one of ${allowed.join(", ")}`);
  return found;
}

function strings(object: Record<string, unknown>, field: string, where: string): readonly string[] | undefined {
  const v = object[field];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.length > MAX_CANONICAL_VALUES || v.some((s) => typeof s !== "string" || s.length > 256)) {
    return fail(`${where}.${field} must be an array of at most ${MAX_CANONICAL_VALUES} short strings`);
  }
  return v as string[];
}

const ATTRIBUTE_FIELDS = [
  "name",
  "type",
  "multiValued",
  "description",
  "required",
  "caseExact",
  "mutability",
  "returned",
  "uniqueness",
  "filterable",
  "canonicalValues",
  "referenceTypes",
  "subAttributes",
];

function parseAttributes(raw: unknown, where: string, max: number, nested: boolean): ExtensionAttribute[] {
  if (!Array.isArray(raw) || raw.length === 0) return fail(`${where} must be a non-empty array`);
  if (raw.length > max) fail(`${where} may hold at most ${max} attributes`);
  const seen = new Set<string>();
  return raw.map((item, i) => {
    const at = `${where}[${i}]`;
    if (!isObject(item)) return fail(`${at} must be an object`);
    only(item, ATTRIBUTE_FIELDS, at);
    const name = text(item, "name", at, 128);
    if (name === undefined || !ATTRNAME_RE.test(name)) {
      return fail(`${at}.name must start with a letter and hold only letters, digits, - and _ (RFC 7643 §2.1)`);
    }
    if (seen.has(lower(name))) fail(`${at}.name ${name} is declared twice (names are case-insensitive)`);
    seen.add(lower(name));
    const type = oneOf(item, "type", at, EXTENSION_ATTRIBUTE_TYPES, "string");
    const uniqueness = oneOf(item, "uniqueness", at, UNIQUENESS, "none");
    const multiValued = flag(item, "multiValued", at);
    const filterable = flag(item, "filterable", at) || uniqueness === "server";
    if (filterable && (nested || multiValued || !INDEXABLE_TYPES.includes(type))) {
      fail(`${at}: only single-valued top-level string or reference attributes may be filterable or unique`);
    }
    let subAttributes: ExtensionAttribute[] | undefined;
    if (type === "complex") {
      if (nested) fail(`${at}: a sub-attribute cannot be complex (RFC 7643 §2.3.8)`);
      subAttributes = parseAttributes(item.subAttributes, `${at}.subAttributes`, MAX_SUB_ATTRIBUTES, true);
    } else if (item.subAttributes !== undefined) {
      fail(`${at}.subAttributes is only for complex attributes`);
    }
    const canonicalValues = strings(item, "canonicalValues", at);
    const referenceTypes = strings(item, "referenceTypes", at);
    return {
      name,
      type,
      multiValued,
      description: text(item, "description", at, MAX_DESCRIPTION_LENGTH) ?? "",
      required: flag(item, "required", at),
      caseExact: flag(item, "caseExact", at),
      mutability: oneOf(item, "mutability", at, MUTABILITIES, "readWrite"),
      returned: oneOf(item, "returned", at, RETURNED, "default"),
      uniqueness,
      filterable,
      ...(canonicalValues === undefined ? {} : { canonicalValues }),
      ...(referenceTypes === undefined ? {} : { referenceTypes }),
      ...(subAttributes === undefined ? {} : { subAttributes }),
    };
  });
}

/** Validates a client's `extensions` array (docs/scim-extensions.md); throws ExtensionDeclarationError. */
export function parseExtensions(raw: unknown): ExtensionDeclaration[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) return fail("extensions must be an array");
  if (raw.length > MAX_EXTENSIONS_PER_CLIENT) {
    fail(`a SCIM client may declare at most ${MAX_EXTENSIONS_PER_CLIENT} extensions`);
  }
  const declared: ExtensionDeclaration[] = [];
  for (const [i, item] of raw.entries()) {
    const at = `extensions[${i}]`;
    if (!isObject(item)) return fail(`${at} must be an object`);
    only(item, ["schema", "name", "description", "resource", "required", "attributes"], at);
    const schema = text(item, "schema", at, MAX_URN_LENGTH);
    if (schema === undefined || !URN_RE.test(schema)) {
      return fail(`${at}.schema must be a URN such as urn:okta:acme:1.0:user (RFC 8141), not ending in a colon`);
    }
    const reserved = RESERVED_URNS.find((r) => overlaps(r, schema));
    if (reserved !== undefined) fail(`${at}.schema ${schema} clashes with the standard schema ${reserved}`);
    const twin = declared.find((d) => overlaps(d.schema, schema));
    if (twin !== undefined) fail(`${at}.schema ${schema} clashes with the extension ${twin.schema} of this client`);
    const resource = oneOf(item, "resource", at, RESOURCES, "User");
    const name = text(item, "name", at, MAX_NAME_LENGTH);
    if (name === undefined || name.trim() === "") return fail(`${at}.name is required`);
    declared.push({
      schema,
      name,
      description: text(item, "description", at, MAX_DESCRIPTION_LENGTH) ?? "",
      resource,
      required: flag(item, "required", at),
      attributes: parseAttributes(item.attributes, `${at}.attributes`, MAX_ATTRIBUTES_PER_EXTENSION, false),
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
