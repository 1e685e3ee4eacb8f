import { Type } from "@sinclair/typebox";
import {
  EXTENSION_ATTRIBUTE_TYPES,
  EXTENSION_RESOURCES,
  MAX_ATTRIBUTE_NAME_LENGTH,
  MAX_ATTRIBUTES_PER_EXTENSION,
  MAX_CANONICAL_VALUE_LENGTH,
  MAX_CANONICAL_VALUES,
  MAX_DECLARATION_BYTES,
  MAX_DESCRIPTION_LENGTH,
  MAX_EXTENSION_NAME_LENGTH,
  MAX_EXTENSIONS_PER_CLIENT,
  MAX_SUB_ATTRIBUTES,
  MAX_TOTAL_ATTRIBUTES,
  MAX_URN_LENGTH,
  MUTABILITIES,
  RETURNED,
  UNIQUENESS,
} from "../../directory/scim-clients/extensions.js";
import { ATTRNAME_PATTERN, URN_PATTERN } from "../../scim/schema/extension-declarations.js";
import { Checked, Enum, Nullable, OptionalFlag } from "./kit.js";

/**
 * The declaration of a client's custom SCIM schema extensions (docs/scim-extensions.md): every field's type,
 * length, pattern and enumeration, each list's count, and the limits of the whole declaration (attributes in all,
 * bytes). The rules that span fields (URN clashes, duplicate names, what may be indexed) are the SCIM
 * grammar's (scim/schema/extension-declarations.ts parseExtensions).
 */

/** No NUL: PostgreSQL's jsonb cannot hold one. */
const NO_NUL = "^[^\\u0000]*$";

const Text = (maxLength: number) =>
  Type.Optional(
    Nullable(
      Checked(Type.String({ maxLength, pattern: NO_NUL }), {
        maxLength: `{path} must be at most ${maxLength} characters`,
        pattern: "{path} must not contain NUL characters",
        default: "{path} must be a string",
      }),
    ),
  );

const Choice = <const V extends readonly string[]>(values: V) =>
  Type.Optional(Nullable(Enum(values, `{path} must be one of ${values.join(", ")}`)));

const Strings = Type.Optional(
  Nullable(
    Checked(
      Type.Array(Type.String({ maxLength: MAX_CANONICAL_VALUE_LENGTH }), { maxItems: MAX_CANONICAL_VALUES }),
      `{path} must be an array of at most ${MAX_CANONICAL_VALUES} short strings`,
    ),
  ),
);

const AttributeName = Checked(
  Type.String({ maxLength: MAX_ATTRIBUTE_NAME_LENGTH, pattern: ATTRNAME_PATTERN }),
  "{path} must start with a letter and hold only letters, digits, - and _ (RFC 7643 §2.1), " +
    `at most ${MAX_ATTRIBUTE_NAME_LENGTH} characters`,
);

/** RFC 7643 §7 characteristics, plus Roster's `filterable`. */
const characteristics = {
  name: AttributeName,
  type: Choice(EXTENSION_ATTRIBUTE_TYPES),
  multiValued: OptionalFlag(),
  description: Text(MAX_DESCRIPTION_LENGTH),
  required: OptionalFlag(),
  caseExact: OptionalFlag(),
  mutability: Choice(MUTABILITIES),
  returned: Choice(RETURNED),
  uniqueness: Choice(UNIQUENESS),
  filterable: OptionalFlag("Whether eq filters may use it (implied by uniqueness server)"),
  canonicalValues: Strings,
  referenceTypes: Strings,
};

const attributeList = <T extends ReturnType<typeof Type.Object>>(item: T, max: number, what: string) =>
  Checked(Type.Array(item, { minItems: 1, maxItems: max }), {
    minItems: "{path} must be a non-empty array",
    maxItems: `{path} may hold at most ${max} ${what}`,
    default: "{path} must be a non-empty array",
  });

/** A sub-attribute may not itself be complex; the domain says so by name, so its subAttributes pass through here. */
const SubAttribute = Type.Object(
  { ...characteristics, subAttributes: Type.Optional(Type.Unknown()) },
  { additionalProperties: false },
);

const Attribute = Type.Object(
  {
    ...characteristics,
    subAttributes: Type.Optional(Nullable(attributeList(SubAttribute, MAX_SUB_ATTRIBUTES, "sub-attributes"))),
  },
  { additionalProperties: false },
);

const Extension = Type.Object(
  {
    schema: Checked(Type.String({ maxLength: MAX_URN_LENGTH, pattern: URN_PATTERN }), {
      maxLength: `{path} must be at most ${MAX_URN_LENGTH} characters`,
      default: "{path} must be a URN such as urn:okta:acme:1.0:user (RFC 8141), not ending in a colon",
    }),
    name: Checked(Type.String({ maxLength: MAX_EXTENSION_NAME_LENGTH, pattern: "^[^\\u0000]*\\S[^\\u0000]*$" }), {
      maxLength: `{path} must be at most ${MAX_EXTENSION_NAME_LENGTH} characters`,
      default: "{path} is required",
    }),
    description: Text(MAX_DESCRIPTION_LENGTH),
    resource: Choice(EXTENSION_RESOURCES),
    required: OptionalFlag("RFC 7643 §6 schemaExtensions.required"),
    attributes: attributeList(Attribute, MAX_ATTRIBUTES_PER_EXTENSION, "attributes"),
  },
  { additionalProperties: false },
);

/**
 * `x-max-total-items` and `x-max-json-bytes` are checked by the admin validator (src/admin/validation.ts): the
 * attributes of all extensions (sub-attributes included), and the declaration's size as JSON.
 */
export const Extensions = Type.Optional(
  Nullable(
    Checked(
      Type.Array(Extension, {
        maxItems: MAX_EXTENSIONS_PER_CLIENT,
        "x-max-total-items": { limit: MAX_TOTAL_ATTRIBUTES, under: ["attributes", "subAttributes"] },
        "x-max-json-bytes": MAX_DECLARATION_BYTES,
        description:
          `Declared SCIM schema extensions (docs/scim-extensions.md): at most ${MAX_EXTENSIONS_PER_CLIENT}, ` +
          `${MAX_TOTAL_ATTRIBUTES} attributes in all and ${MAX_DECLARATION_BYTES} bytes of JSON`,
      }),
      {
        maxItems: `a SCIM client may declare at most ${MAX_EXTENSIONS_PER_CLIENT} extensions`,
        "x-max-total-items":
          `{path} may declare at most ${MAX_TOTAL_ATTRIBUTES} attributes in all, sub-attributes included ` +
          '(docs/scim-extensions.md "Limits")',
        "x-max-json-bytes": `{path} must be at most ${MAX_DECLARATION_BYTES} bytes as JSON (docs/scim-extensions.md "Limits")`,
        default: "{path} must be an array",
      },
    ),
  ),
);
