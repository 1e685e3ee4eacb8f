import type { UserWrite } from "../../directory/identities/types.js";
import { badRequest, ScimError } from "../errors.js";
import { isObject } from "../patch/json.js";
import type { JsonObject, JsonValue } from "../patch/types.js";
import { normalizeElements, normalizeSingle } from "../patch/values.js";
import {
  COMMON_ATTRIBUTES,
  CORE_REGISTRY,
  findAttribute,
  type SchemaRegistry,
  splitSchemaPrefix,
  USER_SCHEMA,
} from "../schema/registry.js";
import type { AttributeDefinition, SchemaDefinition } from "../schema/types.js";
import { checkExtensionRules, storedVerbatim } from "./extension-rules.js";

const invalidSyntax = (detail: string): ScimError => badRequest("invalidSyntax", detail);

/** What validation needs of a registry, derived once per registry. */
interface Plan {
  readonly core: SchemaDefinition | undefined;
  readonly extensions: readonly SchemaDefinition[];
  readonly coreAttributes: readonly AttributeDefinition[];
  readonly storeUnknown: boolean;
}
const planOf = (registry: SchemaRegistry): Plan =>
  registry.memo("users.validate", () => {
    const [core, ...extensions] = registry.schemasFor("User");
    const coreAttributes = [...COMMON_ATTRIBUTES, ...(core?.attributes ?? [])];
    return { core, extensions, coreAttributes, storeUnknown: registry.storeUnknown };
  });
const CORE_PLAN = planOf(CORE_REGISTRY);
const lower = (s: string) => s.toLowerCase();

/** Collected input: core attributes and each extension's, by canonical name (first spelling wins). */
interface Collected {
  core: Map<AttributeDefinition, unknown>;
  extensions: Map<string, Map<AttributeDefinition, unknown>>;
  password: unknown;
  /** Objects of undeclared schema URNs, kept verbatim when the client stores them (docs/scim-extensions.md). */
  verbatim: Map<string, Record<string, unknown>>;
  plan: Plan;
}

/**
 * Issue 3 point 2 and spec 2.1/2.2: a POST/PUT body (or a patched document) → the document to store, typed by the
 * schema registry — the client's, with its declared extensions (docs/scim-extensions.md). Unknown attributes of known
 * schemas are ignored; read-only ones (id, groups, meta) too; a body keyed by an unknown schema URN is 400 unless
 * the client keeps such objects verbatim. `active` defaults to true (spec 3).
 */
export function validateUser(body: unknown, registry: SchemaRegistry = CORE_REGISTRY): UserWrite {
  if (!isObject(body)) throw invalidSyntax("the request body must be a JSON object");
  const plan = registry === CORE_REGISTRY ? CORE_PLAN : planOf(registry);
  const collected: Collected = {
    core: new Map(),
    extensions: new Map(),
    password: undefined,
    verbatim: new Map(),
    plan,
  };
  for (const [key, value] of Object.entries(body)) collect(collected, key, value);

  const scim: JsonObject = { schemas: [USER_SCHEMA] };
  for (const attribute of plan.coreAttributes) {
    if (!collected.core.has(attribute)) continue;
    const value = normalized(attribute, collected.core.get(attribute), attribute.name);
    if (value !== undefined) scim[attribute.name] = value;
  }
  for (const extension of plan.extensions) {
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
  checkRules(scim, plan.core);
  if (registry !== CORE_REGISTRY) {
    checkExtensionRules(registry, scim);
    storedVerbatim(scim, collected.verbatim);
  }
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
  const attribute = findAttribute(into.plan.coreAttributes, key);
  // RFC 7643 §3.1 / issue 3 point 3: read-only attributes in a body are ignored, as are unknown ones.
  if (attribute === undefined || attribute.mutability === "readOnly") return;
  if (attribute.name === "password") into.password = value;
  else if (!into.core.has(attribute)) into.core.set(attribute, value);
}

/** `urn:…:User` → the core object, `urn:…:enterprise:2.0:User` → the extension, `urn:…:User:attr` → one attribute. */
function collectUrn(into: Collected, key: string, value: unknown): void {
  const { core, extensions } = into.plan;
  const whole = [core, ...extensions].find((s) => s !== undefined && lower(s.id) === lower(key));
  if (whole !== undefined) {
    if (!isObject(value)) throw invalidSyntax(`${whole.id} must be an object`);
    for (const [name, v] of Object.entries(value)) setAttribute(into, whole.id, name, v);
    return;
  }
  const { urn, name } = splitSchemaPrefix(key);
  const schema = [core, ...extensions].find((s) => s !== undefined && urn !== undefined && lower(s.id) === lower(urn));
  if (schema === undefined && into.plan.storeUnknown) {
    keepVerbatim(into, key, value);
    return;
  }
  if (schema === undefined) throw invalidSyntax(`unsupported schema in attribute ${key}`);
  setAttribute(into, schema.id, name, value);
}

function setAttribute(into: Collected, schema: string, name: string, value: unknown): void {
  if (schema === USER_SCHEMA) {
    setCore(into, name, value);
    return;
  }
  const definition = into.plan.extensions.find((s) => s.id === schema);
  const attribute = definition === undefined ? undefined : findAttribute(definition.attributes, name);
  if (attribute === undefined || attribute.mutability === "readOnly") return;
  const values = into.extensions.get(schema) ?? new Map<AttributeDefinition, unknown>();
  into.extensions.set(schema, values);
  if (!values.has(attribute)) values.set(attribute, value);
}

/**
 * An undeclared schema URN's object (or a `urn:…:attr` key under it), kept as sent: not validated, not filterable.
 * Objects under one URN merge, first spelling of the URN wins.
 */
function keepVerbatim(into: Collected, key: string, value: unknown): void {
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
function checkRules(scim: JsonObject, core: SchemaDefinition | undefined): void {
  const userName = scim.userName;
  if (typeof userName !== "string" || userName.trim() === "") {
    throw invalidSyntax("userName is required and must not be empty");
  }
  if (typeof scim.timezone === "string" && !isTimeZone(scim.timezone)) {
    throw invalidSyntax(`timezone ${JSON.stringify(scim.timezone)} is not a valid IANA time zone`);
  }
  for (const attribute of core?.attributes ?? []) {
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
