import {
  CORE_REGISTRY,
  coreSchemaOf,
  type ResourceName,
  resolveAttribute,
  type SchemaRegistry,
  schemasFor,
  splitSchemaPrefix,
} from "../schema/registry.js";
import type { AttributeDefinition } from "../schema/types.js";
import { matchesFilter } from "../patch/mutate.js";
import { parsePatchPath } from "../patch/path.js";
import type { FilterTerm, JsonValue, PatchPath } from "../patch/types.js";

export interface Projection {
  readonly attributes?: readonly string[] | undefined;
  readonly excludedAttributes?: readonly string[] | undefined;
}

type Json = Record<string, unknown>;

interface Target {
  /** Undefined: the core schema (top-level keys); else the extension URN key. */
  readonly container: string | undefined;
  readonly attribute: AttributeDefinition | undefined;
  readonly sub: AttributeDefinition | undefined;
  /** `emails[type eq "work"]`: only the matching elements (a tolerance: Microsoft's suite asks for it). */
  readonly filter?: readonly FilterTerm[];
}

/**
 * RFC 7644 §3.9: `attributes` keeps only what is listed (plus what is always returned: `id`,
 * `schemas`); `excludedAttributes` drops what is listed, never the always-returned. Names are case-insensitive
 * and may be URN-qualified; unknown names are ignored. Applies to every response that returns a resource.
 */
export function project(
  resource: ResourceName,
  obj: Json,
  projection: Projection,
  registry: SchemaRegistry = CORE_REGISTRY,
): Json {
  const { attributes, excludedAttributes } = projection;
  if (attributes !== undefined && attributes.length > 0)
    return keepOnly(resource, obj, targetsOf(resource, attributes, registry), registry);
  if (excludedAttributes !== undefined && excludedAttributes.length > 0) {
    return dropAll(obj, targetsOf(resource, excludedAttributes, registry));
  }
  return obj;
}

/**
 * Whether a response under this projection includes the attribute (e.g. a group's `members`, a user's
 * `groups`), so callers can skip loading what will not be returned.
 */
export function includes(resource: ResourceName, projection: Projection, attribute: string): boolean {
  const hasAttributes = projection.attributes !== undefined && projection.attributes.length > 0;
  const hasExcluded = projection.excludedAttributes !== undefined && projection.excludedAttributes.length > 0;
  // Without a projection (most requests), nothing to look up and no closure to make.
  if (!hasAttributes && !hasExcluded) return true;
  const name = attribute.toLowerCase();
  if (projection.attributes !== undefined && hasAttributes) {
    return targetsOf(resource, projection.attributes).some(
      (t) => t.attribute?.name.toLowerCase() === name && t.container === undefined,
    );
  }
  if (projection.excludedAttributes !== undefined) {
    return !targetsOf(resource, projection.excludedAttributes).some(
      (t) => t.attribute?.name.toLowerCase() === name && t.sub === undefined && t.container === undefined,
    );
  }
  return true;
}

function targetsOf(resource: ResourceName, names: readonly string[], registry = CORE_REGISTRY): Target[] {
  const core = coreSchemaOf(resource);
  const out: Target[] = [];
  for (const raw of names) {
    const name = raw.trim();
    if (name === "") continue;
    const whole = schemasFor(resource, registry).find((s) => s.id.toLowerCase() === name.toLowerCase());
    if (whole !== undefined) {
      // A bare extension URN names the whole extension object.
      if (whole.id !== core) out.push({ container: whole.id, attribute: undefined, sub: undefined });
      continue;
    }
    if (name.includes("[")) {
      const filtered = filteredTarget(resource, name, registry);
      if (filtered !== undefined) out.push(filtered);
      continue;
    }
    const resolved = resolveAttribute(resource, name, registry);
    if (resolved === undefined) continue;
    const { urn } = splitSchemaPrefix(name);
    const container = resolved.schema === core ? undefined : resolved.schema;
    if (urn !== undefined && container === undefined && resolved.schema !== core) continue;
    out.push({ container, attribute: resolved.attribute, sub: resolved.sub });
  }
  return out;
}

function filteredTarget(resource: ResourceName, name: string, registry: SchemaRegistry): Target | undefined {
  let path: PatchPath;
  try {
    path = parsePatchPath(resource, name, registry);
  } catch {
    return undefined; // RFC 7644 §3.9: unknown attribute names are ignored
  }
  if (path.filter === undefined || !path.definition.multiValued) return undefined;
  return {
    container: path.schema === coreSchemaOf(resource) ? undefined : path.schema,
    attribute: path.definition,
    sub: path.subDefinition,
    filter: path.filter,
  };
}

const ALWAYS = new Set(["id", "schemas"]);

function keepOnly(resource: ResourceName, obj: Json, targets: readonly Target[], registry: SchemaRegistry): Json {
  const out: Json = {};
  for (const key of Object.keys(obj)) if (ALWAYS.has(key)) out[key] = obj[key];
  for (const t of targets) {
    const source = t.container === undefined ? obj : asObject(obj[t.container]);
    if (source === undefined) continue;
    const into = t.container === undefined ? out : ((out[t.container] as Json | undefined) ?? {});
    if (t.attribute === undefined) {
      out[t.container ?? ""] = source;
      continue;
    }
    const key = t.attribute.name;
    if (!(key in source)) continue;
    const definition = t.attribute;
    const value =
      t.filter !== undefined && Array.isArray(source[key])
        ? (source[key] as JsonValue[]).filter((e) => matchesFilter(e, t.filter ?? [], definition))
        : source[key];
    if (t.sub === undefined) into[key] = value;
    else into[key] = merge(into[key], pick(value, t.sub.name));
    if (t.container !== undefined) out[t.container] = into;
  }
  // Attributes the registry marks as always returned stay, whatever was asked (RFC 7643 §7).
  for (const schema of schemasFor(resource, registry)) {
    for (const a of schema.attributes) {
      if (a.returned === "always" && schema.id === coreSchemaOf(resource) && a.name in obj) out[a.name] = obj[a.name];
    }
  }
  return out;
}

function dropAll(obj: Json, targets: readonly Target[]): Json {
  const out: Json = { ...obj };
  for (const t of targets) {
    if (t.attribute === undefined) {
      if (t.container !== undefined) delete out[t.container];
      continue;
    }
    if (t.attribute.returned === "always" || ALWAYS.has(t.attribute.name)) continue;
    const holder = t.container === undefined ? out : asObject(out[t.container]);
    if (holder === undefined) continue;
    const copy: Json = t.container === undefined ? holder : { ...holder };
    const key = t.attribute.name;
    if (t.sub === undefined) delete copy[key];
    else if (key in copy) copy[key] = omit(copy[key], t.sub.name);
    if (t.container !== undefined) out[t.container] = copy;
  }
  return out;
}

const asObject = (v: unknown): Json | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : undefined;

function pick(value: unknown, sub: string): unknown {
  if (Array.isArray(value)) return value.map((e) => pick(e, sub));
  const o = asObject(value);
  return o === undefined || !(sub in o) ? {} : { [sub]: o[sub] };
}

function omit(value: unknown, sub: string): unknown {
  if (Array.isArray(value)) return value.map((e) => omit(e, sub));
  const o = asObject(value);
  if (o === undefined) return value;
  const { [sub]: _dropped, ...rest } = o;
  return rest;
}

function merge(existing: unknown, next: unknown): unknown {
  if (Array.isArray(existing) && Array.isArray(next)) {
    return next.map((e, i) => ({ ...(asObject(existing[i]) ?? {}), ...(asObject(e) ?? {}) }));
  }
  const a = asObject(existing);
  const b = asObject(next);
  return a !== undefined && b !== undefined ? { ...a, ...b } : next;
}
