import type { UserWrite } from "../../directory/identities/types.js";
import { badRequest, ScimError } from "../errors.js";
import { isObject } from "../patch/json.js";
import type { JsonObject, JsonValue } from "../patch/types.js";
import { normalizeElements, normalizeSingle } from "../patch/values.js";
import { COMMON_ATTRIBUTES, findAttribute, schemasFor, splitSchemaPrefix, USER_SCHEMA } from "../schema/registry.js";
import type { AttributeDefinition } from "../schema/types.js";

const invalidSyntax = (detail: string): ScimError => badRequest("invalidSyntax", detail);

const [CORE, ...EXTENSIONS] = schemasFor("User");
const CORE_ATTRIBUTES: readonly AttributeDefinition[] = [...COMMON_ATTRIBUTES, ...(CORE?.attributes ?? [])];
const lower = (s: string) => s.toLowerCase();

/** Collected input: core attributes and each extension's, by canonical name (first spelling wins). */
interface Collected {
  core: Map<AttributeDefinition, unknown>;
  extensions: Map<string, Map<AttributeDefinition, unknown>>;
  password: unknown;
}

/**
 * Issue 3 point 2 and spec 2.1/2.2: a POST/PUT body (or a patched document) → the document to store, typed by the
 * schema registry. Unknown attributes of known schemas are ignored; read-only ones (id, groups, meta) too; a body
 * keyed by an unknown schema URN is 400. `active` defaults to true (spec 3).
 */
export function validateUser(body: unknown): UserWrite {
  if (!isObject(body)) throw invalidSyntax("the request body must be a JSON object");
  const collected: Collected = { core: new Map(), extensions: new Map(), password: undefined };
  for (const [key, value] of Object.entries(body)) collect(collected, key, value);

  const scim: JsonObject = { schemas: [USER_SCHEMA] };
  for (const attribute of CORE_ATTRIBUTES) {
    if (!collected.core.has(attribute)) continue;
    const value = normalized(attribute, collected.core.get(attribute), attribute.name);
    if (value !== undefined) scim[attribute.name] = value;
  }
  for (const extension of EXTENSIONS) {
    const values = collected.extensions.get(extension.id);
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
  checkRules(scim);
  scim.active = scim.active !== false;
  const password = collected.password;
  if (password === undefined || password === null) return { scim };
  if (typeof password !== "string") throw invalidSyntax("password must be a string");
  return { scim, password };
}

function collect(into: Collected, key: string, value: unknown): void {
  const k = lower(key);
  if (k === "schemas") {
    if (!Array.isArray(value) || value.some((s) => typeof s !== "string")) {
      throw invalidSyntax("schemas must be an array of strings");
    }
    return;
  }
  if (k.startsWith("urn:")) {
    collectUrn(into, key, value);
    return;
  }
  setCore(into, key, value);
}

function setCore(into: Collected, key: string, value: unknown): void {
  const attribute = findAttribute(CORE_ATTRIBUTES, key);
  // RFC 7643 §3.1 / issue 3 point 3: read-only attributes in a body are ignored, as are unknown ones.
  if (attribute === undefined || attribute.mutability === "readOnly") return;
  if (attribute.name === "password") into.password = value;
  else if (!into.core.has(attribute)) into.core.set(attribute, value);
}

/** `urn:…:User` → the core object, `urn:…:enterprise:2.0:User` → the extension, `urn:…:User:attr` → one attribute. */
function collectUrn(into: Collected, key: string, value: unknown): void {
  const whole = [CORE, ...EXTENSIONS].find((s) => s !== undefined && lower(s.id) === lower(key));
  if (whole !== undefined) {
    if (!isObject(value)) throw invalidSyntax(`${whole.id} must be an object`);
    for (const [name, v] of Object.entries(value)) setAttribute(into, whole.id, name, v);
    return;
  }
  const { urn, name } = splitSchemaPrefix(key);
  const schema = [CORE, ...EXTENSIONS].find((s) => s !== undefined && urn !== undefined && lower(s.id) === lower(urn));
  if (schema === undefined) throw invalidSyntax(`unsupported schema in attribute ${key}`);
  setAttribute(into, schema.id, name, value);
}

function setAttribute(into: Collected, schema: string, name: string, value: unknown): void {
  if (schema === USER_SCHEMA) {
    setCore(into, name, value);
    return;
  }
  const definition = EXTENSIONS.find((s) => s.id === schema);
  const attribute = definition === undefined ? undefined : findAttribute(definition.attributes, name);
  if (attribute === undefined || attribute.mutability === "readOnly") return;
  const values = into.extensions.get(schema) ?? new Map<AttributeDefinition, unknown>();
  into.extensions.set(schema, values);
  if (!values.has(attribute)) values.set(attribute, value);
}

/** A value typed by its definition (string booleans accepted, DESIGN R5); undefined when unassigned. */
function normalized(attribute: AttributeDefinition, raw: unknown, label: string): JsonValue | undefined {
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
    // Spec 7: a resource that fails validation is invalidSyntax (PATCH reports malformed values before this).
    if (e instanceof ScimError) throw invalidSyntax(e.detail ?? "invalid attribute value");
    throw e;
  }
}

/** Spec 2.1 and 8: userName present and non-empty, timezone an IANA zone, at most one primary per attribute. */
function checkRules(scim: JsonObject): void {
  const userName = scim.userName;
  if (typeof userName !== "string" || userName.trim() === "") {
    throw invalidSyntax("userName is required and must not be empty");
  }
  if (typeof scim.timezone === "string" && !isTimeZone(scim.timezone)) {
    throw invalidSyntax(`timezone ${JSON.stringify(scim.timezone)} is not a valid IANA time zone`);
  }
  for (const attribute of CORE?.attributes ?? []) {
    const elements = scim[attribute.name];
    if (!attribute.multiValued || !Array.isArray(elements)) continue;
    const primaries = elements.filter((e) => isObject(e) && e.primary === true).length;
    if (primaries > 1) throw invalidSyntax(`at most one ${attribute.name} value may have primary set to true`);
  }
}

export const isTimeZone = (zone: string): boolean => {
  try {
    new Intl.DateTimeFormat(undefined, { timeZone: zone });
    return true;
  } catch {
    return false;
  }
};
