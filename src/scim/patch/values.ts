import { badRequest, type ScimError } from "../errors.js";
import { findAttribute } from "../schema/registry.js";
import type { AttributeDefinition } from "../schema/types.js";
import { isObject, isUnassigned } from "./json.js";
import type { JsonObject, JsonValue } from "./types.js";

const invalidValue = (label: string, why: string): ScimError => badRequest("invalidValue", `${label}: ${why}`);

/** The string itself when it fits its attribute's maxLength (in code points, as documented), else 400. */
export const withinMaxLength = (definition: AttributeDefinition, value: string, label: string): string => {
  const max = definition.maxLength;
  // UTF-16 length bounds the code point count from above: most strings need no counting.
  if (max === undefined || value.length <= max) return value;
  let codePoints = 0;
  for (const _ of value) codePoints++;
  if (codePoints <= max) return value;
  throw invalidValue(label, `must be at most ${max} characters (got ${codePoints})`);
};

/** A value for a primitive attribute; string booleans are accepted (Entra sends "False"). */
const primitive = (definition: AttributeDefinition, raw: unknown, label: string): JsonValue => {
  switch (definition.type) {
    case "boolean":
      if (typeof raw === "boolean") return raw;
      if (typeof raw === "string" && /^(true|false)$/i.test(raw.trim())) return raw.trim().toLowerCase() === "true";
      throw invalidValue(label, "must be a boolean");
    case "integer":
      if (typeof raw === "number" && Number.isInteger(raw)) return raw;
      throw invalidValue(label, "must be an integer");
    case "decimal":
      if (typeof raw === "number" && Number.isFinite(raw)) return raw;
      throw invalidValue(label, "must be a number");
    default:
      if (typeof raw === "string") return withinMaxLength(definition, raw, label);
      throw invalidValue(label, "must be a string");
  }
};

/**
 * A complex value with canonical sub-attribute names. Read-only and unknown sub-attributes are dropped (IdPs send
 * `display`, `$ref: null`); a null sub-attribute stays null so a merge can unassign it.
 * A bare string for a complex attribute with a `value` sub-attribute becomes `{value}` (Entra's manager "271";
 * Entra's JSON-encoded roles strings are thus kept verbatim as the role's value).
 */
export const normalizeComplex = (definition: AttributeDefinition, raw: unknown, label: string): JsonObject => {
  const subs = definition.subAttributes ?? [];
  let source: unknown = raw;
  if (typeof raw === "string" && findAttribute(subs, "value") !== undefined) source = { value: raw };
  if (!isObject(source)) throw invalidValue(label, "must be an object");
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(source)) {
    const sub = findAttribute(subs, key);
    if (sub === undefined || sub.mutability === "readOnly") continue;
    out[sub.name] = value === null ? null : primitive(sub, value, `${label}.${sub.name}`);
  }
  return out;
};

/** Drops null members of a complex value (RFC 7644 §3.5.2: null means unassigned). */
export const withoutNulls = (value: JsonObject): JsonObject =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null));

/** One value of an attribute (an element, for multi-valued ones); undefined means "unassign". */
export const normalizeSingle = (
  definition: AttributeDefinition,
  raw: unknown,
  label: string,
): JsonValue | undefined => {
  if (raw === null || raw === undefined) return undefined;
  if (definition.type !== "complex") return primitive(definition, raw, label);
  return normalizeComplex(definition, raw, label);
};

/** The elements of a multi-valued attribute; a single value is taken as a one-element list. */
export const normalizeElements = (definition: AttributeDefinition, raw: unknown, label: string): JsonValue[] => {
  if (raw === null || raw === undefined) return [];
  const items: unknown[] = Array.isArray(raw) ? raw : [raw];
  const elements: JsonValue[] = [];
  for (const item of items) {
    const value = normalizeSingle(definition, item, label);
    const element = isObject(value) ? withoutNulls(value) : value;
    if (!isUnassigned(element) && element !== undefined) elements.push(element);
  }
  return elements;
};
