import type { UserWrite } from "../../directory/identities/types.js";
import { badRequest, type ScimError } from "../errors.js";
import { isObject } from "../patch/json.js";
import type { JsonObject } from "../patch/types.js";
import {
  COMMON_ATTRIBUTES,
  CORE_REGISTRY,
  findAttribute,
  type SchemaRegistry,
  splitSchemaPrefix,
  USER_SCHEMA,
} from "../schema/registry.js";
import type { AttributeDefinition, SchemaDefinition } from "../schema/types.js";
import {
  collectExtension,
  extensionInput,
  type ExtensionInput,
  normalized,
  writeExtensions,
} from "../schema/extension-input.js";
import { checkExtensionRules, storedVerbatim } from "./extension-rules.js";

const invalidSyntax = (detail: string): ScimError => badRequest("invalidSyntax", detail);

/** What validation needs of a registry, derived once per registry. */
interface Plan {
  readonly core: SchemaDefinition | undefined;
  readonly coreAttributes: readonly AttributeDefinition[];
}
const planOf = (registry: SchemaRegistry): Plan =>
  registry.memo("users.validate", () => {
    const [core] = registry.schemasFor("User");
    const coreAttributes = [...COMMON_ATTRIBUTES, ...(core?.attributes ?? [])];
    return { core, coreAttributes };
  });
const CORE_PLAN = planOf(CORE_REGISTRY);
const lower = (s: string) => s.toLowerCase();

/** Collected input: core attributes by canonical name (first spelling wins), and the extensions'. */
interface Collected {
  core: Map<AttributeDefinition, unknown>;
  extensions: ExtensionInput;
  password: unknown;
  plan: Plan;
}

/**
 * A POST/PUT body (or a patched document) → the document to store, typed by the
 * schema registry — the client's, with its declared extensions (docs/scim-extensions.md). Unknown attributes of known
 * schemas are ignored; read-only ones (id, groups, meta) too; a body keyed by an unknown schema URN is 400 unless
 * the client keeps such objects verbatim. `active` defaults to true.
 */
export function validateUser(body: unknown, registry: SchemaRegistry = CORE_REGISTRY): UserWrite {
  if (!isObject(body)) throw invalidSyntax("the request body must be a JSON object");
  const plan = registry === CORE_REGISTRY ? CORE_PLAN : planOf(registry);
  const collected: Collected = {
    core: new Map(),
    extensions: extensionInput(registry, "User"),
    password: undefined,
    plan,
  };
  for (const [key, value] of Object.entries(body)) collect(collected, key, value);

  const scim: JsonObject = { schemas: [USER_SCHEMA] };
  for (const attribute of plan.coreAttributes) {
    if (!collected.core.has(attribute)) continue;
    const value = normalized(attribute, collected.core.get(attribute), attribute.name);
    if (value !== undefined) scim[attribute.name] = value;
  }
  writeExtensions(collected.extensions, scim);
  checkRules(scim, plan.core);
  if (registry !== CORE_REGISTRY) {
    checkExtensionRules(registry, scim);
    storedVerbatim(scim, collected.extensions.verbatim);
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
  // RFC 7643 §3.1: read-only attributes in a body are ignored, as are unknown ones.
  if (attribute === undefined || attribute.mutability === "readOnly") return;
  if (attribute.name === "password") into.password = value;
  else if (!into.core.has(attribute)) into.core.set(attribute, value);
}

/** `urn:…:User` → the core object, `urn:…:User:attr` → one core attribute, other URNs → the extensions'. */
function collectUrn(into: Collected, key: string, value: unknown): void {
  const core = into.plan.core;
  if (core !== undefined && lower(core.id) === lower(key)) {
    if (!isObject(value)) throw invalidSyntax(`${core.id} must be an object`);
    for (const [name, v] of Object.entries(value)) setCore(into, name, v);
    return;
  }
  const { urn, name } = splitSchemaPrefix(key);
  if (core !== undefined && urn !== undefined && lower(urn) === lower(core.id)) setCore(into, name, value);
  else collectExtension(into.extensions, key, value);
}

/** `userName` present and non-empty, timezone an IANA zone, at most one primary per attribute. */
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
