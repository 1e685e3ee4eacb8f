import type { ScimClient } from "../directory/scim-clients/types.js";
import type { BodyRedactor } from "../observability/redact.js";
import { isSecretKey, MAYBE_SECRET, REDACTED, redactJson } from "../platform/redact.js";
import { isObject } from "./patch/json.js";
import { parsePatchPath } from "./patch/path.js";
import { registryOf } from "./schema/client-registry.js";
import {
  COMMON_ATTRIBUTES,
  CORE_REGISTRY,
  canonicalSchemaUrn,
  coreSchemaOf,
  type ResourceName,
  type SchemaRegistry,
} from "./schema/registry.js";
import type { AttributeDefinition, SchemaDefinition } from "./schema/types.js";

/**
 * Secrets in SCIM bodies found by what the body means to this server, not by how a key is spelt: a PATCH path is
 * read by the PATCH engine's own parser (any case, trimmed, value paths, URN-qualified), a path-less value's keys
 * are paths too (dotted, URN-keyed extension objects), bulk operations carry either form, and an attribute is secret
 * when the client's schema says so (`returned: never` or `writeOnly`, as `password` is) or its name is secret-like.
 * Everything else goes through the key-name rules as well, so this only ever hides more.
 */
export const SCIM_REDACTOR: BodyRedactor = {
  suspect: (client) => suspectOf(registryFor(client)),
  redact: (client, url, body) => new Walker(resourceOfUrl(url), registryFor(client)).document(body),
};

const registryFor = (client: object): SchemaRegistry =>
  "extensions" in client && "unknownExtensions" in client ? registryOf(client as ScimClient) : CORE_REGISTRY;

const isSecretDefinition = (d: AttributeDefinition): boolean =>
  d.returned === "never" || d.mutability === "writeOnly" || isSecretKey(d.name);

/** The names of the attributes a registry holds secret, at any depth. */
const secretNames = (registry: SchemaRegistry): string[] => {
  const names: string[] = [];
  const visit = (attributes: readonly AttributeDefinition[]) => {
    for (const a of attributes) {
      if (isSecretDefinition(a)) names.push(a.name);
      if (a.subAttributes !== undefined) visit(a.subAttributes);
    }
  };
  for (const schema of registry.schemas) visit(schema.attributes);
  return names;
};

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The secret words plus this registry's secret attribute names, case-folded (`/iu`) so no spelling slips past. */
const suspectOf = (registry: SchemaRegistry): RegExp =>
  registry === CORE_REGISTRY
    ? MAYBE_SECRET
    : registry.memo("redaction-suspect", () => {
        const extra = secretNames(registry).filter((n) => !MAYBE_SECRET.test(n));
        if (extra.length === 0) return MAYBE_SECRET;
        return new RegExp(`${MAYBE_SECRET.source}|${[...new Set(extra)].map(escapeRegExp).join("|")}`, "iu");
      });

/** `/scim/{client}/v2/Groups…` reads as Group bodies; every other URL as User bodies (the stricter reading). */
const resourceOfUrl = (url: string): ResourceName => (/\/groups(?:[/?#.]|$)/i.test(url) ? "Group" : "User");

const lowerKey = (key: string): string => key.trim().toLowerCase();

/** Attribute lists by lower-cased name: the registry's own comparison (findAttribute), without a scan per key. */
const indexes = new WeakMap<readonly AttributeDefinition[], Map<string, AttributeDefinition>>();
const lookup = (attributes: readonly AttributeDefinition[], key: string): AttributeDefinition | undefined => {
  let index = indexes.get(attributes);
  if (index === undefined) {
    index = new Map();
    for (const a of attributes) if (!index.has(a.name.toLowerCase())) index.set(a.name.toLowerCase(), a);
    indexes.set(attributes, index);
  }
  return index.get(lowerKey(key));
};

class Walker {
  constructor(
    private readonly resource: ResourceName,
    private readonly registry: SchemaRegistry,
  ) {}

  /** Any body: a resource, a PatchOp message, a bulk request or response, a list, an error. */
  document(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((v) => this.document(v));
    if (!isObject(value)) return value;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      const lower = lowerKey(key);
      if (isSecretKey(key)) out[key] = REDACTED;
      else if (lower === "operations" && Array.isArray(v)) out[key] = v.map((op) => this.operation(op));
      else out[key] = this.keyed(key, v, () => this.document(v));
    }
    return out;
  }

  /** A key of a resource: an extension's object, a core attribute by its definition, or else `otherwise`. */
  private keyed(key: string, value: unknown, otherwise: () => unknown): unknown {
    const extension = this.extension(key);
    if (extension !== undefined) return isObject(value) ? this.members(extension.attributes, value) : redactJson(value);
    const definition = lookup(this.coreAttributes(), key);
    return definition === undefined ? otherwise() : this.attribute(definition, value);
  }

  /** The core schema's attributes and the common ones, as one list per registry and resource type. */
  private coreAttributes(): readonly AttributeDefinition[] {
    return this.registry.memo(`redact.${this.resource}.core`, () => [
      ...(this.registry.schemasFor(this.resource)[0]?.attributes ?? []),
      ...COMMON_ATTRIBUTES,
    ]);
  }

  private attribute(definition: AttributeDefinition, value: unknown): unknown {
    if (isSecretDefinition(definition)) return REDACTED;
    const subs = definition.subAttributes;
    if (subs === undefined) return redactJson(value);
    if (Array.isArray(value)) return value.map((v) => (isObject(v) ? this.members(subs, v) : redactJson(v)));
    return isObject(value) ? this.members(subs, value) : redactJson(value);
  }

  /** An object whose keys are attributes of `attributes` (an extension's object, a complex value). */
  private members(attributes: readonly AttributeDefinition[], object: Record<string, unknown>): unknown {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(object)) {
      const definition = lookup(attributes, key);
      out[key] = isSecretKey(key) ? REDACTED : definition === undefined ? redactJson(v) : this.attribute(definition, v);
    }
    return out;
  }

  /** One PATCH operation (RFC 7644 §3.5.2), or one bulk operation (§3.7) whose `data` is a resource or a PatchOp. */
  private operation(op: unknown): unknown {
    if (!isObject(op)) return redactJson(op);
    const paths = Object.entries(op).flatMap(([k, v]) => (lowerKey(k) === "path" && typeof v === "string" ? [v] : []));
    const targets = paths.filter((p) => p.trim() !== "");
    const bulkResource = paths.some((p) => /^\s*\/?groups\b/i.test(p)) ? "Group" : this.resource;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(op)) {
      const lower = lowerKey(k);
      if (isSecretKey(k)) out[k] = REDACTED;
      else if (lower === "data") out[k] = new Walker(bulkResource, this.registry).document(v);
      else if (lower !== "value") out[k] = this.document(v);
      // Every path the operation names is applied in turn: whichever one the engine reads, its value is covered.
      else
        out[k] = targets.length === 0 ? this.pathless(v) : targets.reduce<unknown>((acc, p) => this.atPath(p, acc), v);
    }
    return out;
  }

  /** A path-less value: its keys are attribute paths (dotted, URN-qualified) or extension URNs. */
  private pathless(value: unknown): unknown {
    if (!isObject(value)) return redactJson(value);
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      out[key] = lowerKey(key) === "schemas" ? v : isSecretKey(key) ? REDACTED : this.atPath(key, v);
    }
    return out;
  }

  /** The value a PATCH path receives, read with the PATCH engine's own path parser. */
  private atPath(path: string, value: unknown): unknown {
    if (value === REDACTED) return value;
    const raw = path.trim();
    const extension = this.extension(raw);
    if (extension !== undefined) return isObject(value) ? this.members(extension.attributes, value) : redactJson(value);
    if (raw.toLowerCase() === coreSchemaOf(this.resource).toLowerCase()) return this.document(value);
    let parsed: ReturnType<typeof parsePatchPath>;
    try {
      parsed = parsePatchPath(this.resource, raw, this.registry);
    } catch {
      // Refused by the engine, so nothing was set; a secret-looking name is still hidden (it may be a typo's password).
      return this.looksSecret(raw) ? REDACTED : redactJson(value);
    }
    if (isSecretDefinition(parsed.definition)) return REDACTED;
    if (parsed.subDefinition !== undefined) return this.attribute(parsed.subDefinition, value);
    return this.attribute(parsed.definition, value);
  }

  /** Any name in an unparsable path (URN parts, dotted parts, filter words) that is secret-like or a secret attribute. */
  private looksSecret(path: string): boolean {
    const secret = suspectOf(this.registry);
    return path.split(/[\s:.[\]"]+/).some((part) => part !== "" && (isSecretKey(part) || secret.test(part)));
  }

  /** The extension schema a key or path names (an extension URN of the resource, any case), if any. */
  private extension(key: string): SchemaDefinition | undefined {
    const trimmed = key.trim();
    // Most keys are attribute names: only a URN can name a schema.
    if (trimmed.length < 4 || trimmed.slice(0, 4).toLowerCase() !== "urn:") return undefined;
    const urn = canonicalSchemaUrn(this.resource, trimmed, this.registry);
    if (urn === undefined || urn === coreSchemaOf(this.resource)) return undefined;
    return this.registry.findSchema(urn);
  }
}
