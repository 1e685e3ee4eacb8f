import { badRequest } from "../errors.js";
import {
  attributesIn,
  COMMON_ATTRIBUTES,
  CORE_REGISTRY,
  canonicalSchemaUrn,
  coreSchemaOf,
  findAttribute,
  type ResourceName,
  type SchemaRegistry,
  schemasFor,
} from "../schema/registry.js";
import type { AttributeDefinition } from "../schema/types.js";
import { isObject, isUnassigned } from "./json.js";
import type { JsonObject, JsonValue, ScimObject } from "./types.js";

const renameSubAttributes = (definition: AttributeDefinition, value: JsonValue): JsonValue => {
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, v] of Object.entries(value))
    out[findAttribute(definition.subAttributes ?? [], key)?.name ?? key] = v;
  return out;
};

/** Canonical attribute names; unassigned attributes dropped; unknown keys kept as they are. */
const canonicalAttributes = (attributes: readonly AttributeDefinition[], object: JsonObject): JsonObject => {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(object)) {
    const definition = findAttribute(attributes, key);
    if (definition === undefined) {
      out[key] = value;
      continue;
    }
    if (isUnassigned(value)) continue;
    out[definition.name] =
      definition.type !== "complex"
        ? value
        : Array.isArray(value)
          ? value.map((e) => renameSubAttributes(definition, e))
          : renameSubAttributes(definition, value);
  }
  return out;
};

/**
 * A stored resource in the registry's spelling, so comparisons and lookups are exact. The objects it renames are
 * new; values it keeps as they are (strings, simple multi-valued attributes, unknown keys) are shared with `current`:
 * the result is for reading, and a caller that changes it copies it first (applyPatch's Patcher does).
 */
export const canonicalize = (
  resource: ResourceName,
  current: ScimObject,
  registry: SchemaRegistry = CORE_REGISTRY,
): ScimObject => {
  const core = coreSchemaOf(resource);
  const [coreSchema, ...extensions] = schemasFor(resource, registry);
  const coreAttributes = coreSchema === undefined ? COMMON_ATTRIBUTES : attributesIn(resource, coreSchema);
  const topLevel: JsonObject = {};
  const extensionObjects: JsonObject = {};
  for (const [key, value] of Object.entries(current)) {
    const urn = canonicalSchemaUrn(resource, key, registry);
    const extension = extensions.find((s) => s.id === urn);
    if (urn !== undefined && urn !== core && extension !== undefined && isObject(value)) {
      const attributes = canonicalAttributes(extension.attributes, value);
      if (Object.keys(attributes).length > 0) extensionObjects[extension.id] = attributes;
    } else topLevel[key] = value;
  }
  return { ...canonicalAttributes(coreAttributes, topLevel), ...extensionObjects };
};

/**
 * Drops emptied extension objects, keeps a `schemas` array in step with the extensions present (RFC 7643 §3),
 * and refuses to unassign a required attribute (RFC 7644 §3.5.2: 400 mutability).
 */
export const finalize = (
  resource: ResourceName,
  before: ScimObject,
  after: ScimObject,
  registry: SchemaRegistry = CORE_REGISTRY,
): void => {
  const [coreSchema, ...extensions] = schemasFor(resource, registry);
  for (const extension of extensions) {
    const object = after[extension.id];
    const present = isObject(object) && !isUnassigned(object);
    if (!present) delete after[extension.id];
    const schemas = after.schemas;
    if (!Array.isArray(schemas)) continue;
    const listed = schemas.some((s) => typeof s === "string" && s.toLowerCase() === extension.id.toLowerCase());
    if (present && !listed) schemas.push(extension.id);
    if (!present && listed) {
      after.schemas = schemas.filter((s) => typeof s !== "string" || s.toLowerCase() !== extension.id.toLowerCase());
    }
  }
  for (const attribute of coreSchema?.attributes ?? []) {
    if (attribute.required && !isUnassigned(before[attribute.name]) && isUnassigned(after[attribute.name])) {
      throw badRequest("mutability", `${attribute.name} is required and cannot be removed`);
    }
  }
};
