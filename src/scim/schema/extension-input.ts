import { badRequest, ScimError } from "../errors.js";
import { isObject } from "../patch/json.js";
import type { JsonObject, JsonValue } from "../patch/types.js";
import { normalizeElements, normalizeSingle } from "../patch/values.js";
import { findAttribute, type ResourceName, type SchemaRegistry, splitSchemaPrefix } from "./registry.js";
import type { AttributeDefinition, SchemaDefinition } from "./types.js";

const invalidSyntax = (detail: string): ScimError => badRequest("invalidSyntax", detail);
const lower = (s: string) => s.toLowerCase();

/**
 * The extension part of a resource body being validated (a POST/PUT body or a patched document): each extension
 * schema's values by attribute (first spelling wins), and the objects of undeclared URNs kept verbatim when the
 * client stores them (docs/scim-extensions.md). Core attributes are the caller's.
 */
export interface ExtensionInput {
  /** The resource type's extension schemas (standard ones included), in registry order. */
  readonly schemas: readonly SchemaDefinition[];
  readonly storeUnknown: boolean;
  readonly values: Map<string, Map<AttributeDefinition, unknown>>;
  readonly verbatim: Map<string, Record<string, unknown>>;
}

export const extensionInput = (registry: SchemaRegistry, resource: ResourceName): ExtensionInput => ({
  schemas: registry.memo(`${resource}.extensionSchemas`, () => registry.schemasFor(resource).slice(1)),
  storeUnknown: registry.storeUnknown,
  values: new Map(),
  verbatim: new Map(),
});

/**
 * A body key under a non-core schema URN: `urn:…` → the extension object, `urn:…:attr` → one attribute of it, an
 * undeclared URN → kept verbatim or 400. Unknown attributes of a known extension are ignored, as are read-only ones.
 */
export function collectExtension(into: ExtensionInput, key: string, value: unknown): void {
  const whole = into.schemas.find((s) => lower(s.id) === lower(key));
  if (whole !== undefined) {
    if (!isObject(value)) throw invalidSyntax(`${whole.id} must be an object`);
    for (const [name, v] of Object.entries(value)) setAttribute(into, whole, name, v);
    return;
  }
  const { urn, name } = splitSchemaPrefix(key);
  const schema = urn === undefined ? undefined : into.schemas.find((s) => lower(s.id) === lower(urn));
  if (schema === undefined && into.storeUnknown) {
    keepVerbatim(into, key, value);
    return;
  }
  if (schema === undefined) throw invalidSyntax(`unsupported schema in attribute ${key}`);
  setAttribute(into, schema, name, value);
}

function setAttribute(into: ExtensionInput, schema: SchemaDefinition, name: string, value: unknown): void {
  const attribute = findAttribute(schema.attributes, name);
  if (attribute === undefined || attribute.mutability === "readOnly") return;
  const values = into.values.get(schema.id) ?? new Map<AttributeDefinition, unknown>();
  into.values.set(schema.id, values);
  if (!values.has(attribute)) values.set(attribute, value);
}

/**
 * An undeclared schema URN's object (or a `urn:…:attr` key under it), kept as sent: not validated, not filterable.
 * Objects under one URN merge, first spelling of the URN wins.
 */
function keepVerbatim(into: ExtensionInput, key: string, value: unknown): void {
  const existing = [...into.verbatim.keys()].find((k) => lower(k) === lower(key));
  if (isObject(value)) {
    into.verbatim.set(existing ?? key, { ...(into.verbatim.get(existing ?? "") ?? {}), ...value });
    return;
  }
  const { urn, name } = splitSchemaPrefix(key);
  if (urn === undefined || name === "") throw invalidSyntax(`${key} must be an object`);
  const holder = [...into.verbatim.keys()].find((k) => lower(k) === lower(urn)) ?? urn;
  into.verbatim.set(holder, { ...(into.verbatim.get(holder) ?? {}), [name]: value });
}

/** Writes each extension's typed object into `scim`, its URN joining `schemas` (RFC 7643 §3); empty ones are left out. */
export function writeExtensions(into: ExtensionInput, scim: JsonObject): void {
  for (const extension of into.schemas) {
    const values = into.values.get(extension.id);
    if (values === undefined) continue;
    const out: JsonObject = {};
    for (const attribute of extension.attributes) {
      if (!values.has(attribute)) continue;
      const value = normalized(attribute, values.get(attribute), attribute.name);
      if (value !== undefined) out[attribute.name] = value;
    }
    if (Object.keys(out).length > 0) {
      scim[extension.id] = out;
      (scim.schemas as JsonValue[]).push(extension.id);
    }
  }
}

/** A value typed by its definition (string booleans accepted, as IdPs send them); undefined when unassigned. */
export function normalized(attribute: AttributeDefinition, raw: unknown, label: string): JsonValue | undefined {
  try {
    if (attribute.multiValued) {
      const elements = normalizeElements(attribute, raw, label);
      return elements.length === 0 ? undefined : elements;
    }
    const value = normalizeSingle(attribute, raw, label);
    if (isObject(value)) {
      const kept = Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null));
      return Object.keys(kept).length === 0 ? undefined : kept;
    }
    return value;
  } catch (e) {
    // A resource that fails validation is invalidSyntax (docs/decisions.md) (PATCH reports malformed values before this).
    if (e instanceof ScimError) throw invalidSyntax(e.detail ?? "invalid attribute value");
    throw e;
  }
}
