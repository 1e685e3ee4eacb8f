import type {
  ExtensionAttribute,
  ExtensionAttributeType,
  ExtensionDeclaration,
  ExtensionResource,
} from "../../directory/scim-clients/extensions.js";
import {
  ENTERPRISE_USER_SCHEMA,
  GROUP_SCHEMA,
  MESSAGES_URN,
  RESOURCE_TYPE_SCHEMA,
  SCHEMA_SCHEMA,
  SERVICE_PROVIDER_CONFIG_SCHEMA,
  USER_SCHEMA,
} from "./registry.js";

/**
 * The SCIM grammar of a client's extension declarations (RFC 7643 §2, §7, §8.7; docs/scim-extensions.md): URN and
 * attribute-name patterns, the reserved URNs, and the rules that span fields. The admin API checks a declaration with
 * these before the directory stores it as data.
 */

/** Only these may be filterable or unique: the filter grammar takes string literals, compared as text. */
const INDEXABLE_TYPES: readonly ExtensionAttributeType[] = ["string", "reference"];

export class ExtensionDeclarationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ExtensionDeclarationError";
  }
}

/** Schema URNs a declaration may neither repeat nor nest under (RFC 7643 §8.7, RFC 7644 §3.1 messages). */
const RESERVED_URNS = [
  USER_SCHEMA,
  GROUP_SCHEMA,
  ENTERPRISE_USER_SCHEMA,
  SERVICE_PROVIDER_CONFIG_SCHEMA,
  RESOURCE_TYPE_SCHEMA,
  SCHEMA_SCHEMA,
  MESSAGES_URN,
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
