import { badRequest, type ScimError } from "../errors.js";
import { isObject } from "../patch/json.js";
import type { JsonObject, JsonValue } from "../patch/types.js";
import { ENTERPRISE_USER_SCHEMA, type ResourceName, type SchemaRegistry, USER_SCHEMA } from "../schema/registry.js";
import type { AttributeDefinition } from "../schema/types.js";

const invalidSyntax = (detail: string): ScimError => badRequest("invalidSyntax", detail);

/** RFC 7643 §2.3.5: an xsd:dateTime with a time zone (RFC 3339 as SCIM clients send it). */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const STANDARD = new Set([USER_SCHEMA, ENTERPRISE_USER_SCHEMA]);

function checkDateTimes(attribute: AttributeDefinition, value: JsonValue | undefined, label: string): void {
  if (value === undefined) return;
  if (attribute.type === "dateTime") {
    for (const v of Array.isArray(value) ? value : [value]) {
      if (typeof v !== "string" || !DATE_TIME.test(v) || Number.isNaN(Date.parse(v))) {
        throw invalidSyntax(`${label} must be a dateTime such as 2024-05-01T09:30:00Z`);
      }
    }
  }
  if (attribute.type !== "complex") return;
  for (const element of Array.isArray(value) ? value : [value]) {
    if (!isObject(element)) continue;
    for (const sub of attribute.subAttributes ?? []) checkDateTimes(sub, element[sub.name], `${label}.${sub.name}`);
  }
}

/**
 * The declared extensions' rules on a validated document (docs/scim-extensions.md): a required extension is
 * present, a present extension carries its required attributes, dateTime values are dates.
 */
export function checkExtensionRules(registry: SchemaRegistry, scim: JsonObject, resource: ResourceName = "User"): void {
  const required = new Set(
    registry
      .resourceTypeOf(resource)
      .schemaExtensions.filter((e) => e.required)
      .map((e) => e.schema),
  );
  for (const schema of registry.schemasFor(resource).slice(1)) {
    if (STANDARD.has(schema.id)) continue;
    const object = scim[schema.id];
    if (!isObject(object)) {
      if (required.has(schema.id)) throw invalidSyntax(`the extension ${schema.id} is required`);
      continue;
    }
    for (const attribute of schema.attributes) {
      const value = object[attribute.name];
      if (attribute.required && value === undefined) {
        throw invalidSyntax(`${schema.id}:${attribute.name} is required`);
      }
      checkDateTimes(attribute, value, `${schema.id}:${attribute.name}`);
    }
  }
}

/** Adds the kept objects of undeclared schema URNs to the document, each URN joining `schemas` (RFC 7643 §3). */
export function storedVerbatim(scim: JsonObject, verbatim: ReadonlyMap<string, Record<string, unknown>>): void {
  for (const [urn, object] of verbatim) {
    if (Object.keys(object).length === 0) continue;
    scim[urn] = object as JsonObject;
    (scim.schemas as JsonValue[]).push(urn);
  }
}

/**
 * RFC 7643 §2.2 `immutable`: a declared attribute may be set while it has no value, never changed or removed after
 * (400 mutability, as RFC 7644 §3.5.2 answers a forbidden modification). Compared as stored, per extension object.
 */
export function checkImmutable(
  registry: SchemaRegistry,
  before: JsonObject,
  after: JsonObject,
  resource: ResourceName = "User",
): void {
  for (const schema of registry.schemasFor(resource).slice(1)) {
    if (STANDARD.has(schema.id)) continue;
    const old = before[schema.id];
    if (!isObject(old)) continue;
    const fresh = after[schema.id];
    for (const attribute of schema.attributes) {
      if (attribute.mutability !== "immutable" || old[attribute.name] === undefined) continue;
      const next = isObject(fresh) ? fresh[attribute.name] : undefined;
      if (JSON.stringify(next) !== JSON.stringify(old[attribute.name])) {
        throw badRequest("mutability", `${schema.id}:${attribute.name} is immutable once set`);
      }
    }
  }
}
