import type { Projection } from "../query/projection.js";
import { ENTERPRISE_USER_SCHEMA, type ResourceName, type SchemaRegistry, USER_SCHEMA } from "../schema/registry.js";

type Json = Record<string, unknown>;

/** The `schemas` arrays of users with no custom extension, as jsonb writes them: plain for every registry. */
const CORE_ONLY = JSON.stringify([USER_SCHEMA]);
const CORE_AND_ENTERPRISE = `["${USER_SCHEMA}", "${ENTERPRISE_USER_SCHEMA}"]`;

/** Where kept objects of undeclared schema URNs go: after every declared key, before meta. */
export const VERBATIM_RANK = 1_000_000;

/** The response key order of a registry: the standard order, then its declared extensions. */
export const rankOf = (registry: SchemaRegistry, standard: readonly string[]): ReadonlyMap<string, number> =>
  registry.memo("users.rank", () => {
    const order = [...standard];
    for (const schema of registry.schemasFor("User")) if (!order.includes(schema.id)) order.push(schema.id);
    return new Map(order.map((key, i) => [key, i]));
  });

/** `schemas` without URNs whose object the response does not carry (another client's extension). */
export function knownSchemas(out: Json, schemas: readonly unknown[]): unknown[] {
  return schemas.filter((s, i) => i === 0 || typeof s !== "string" || Object.hasOwn(out, s));
}

interface Hidden {
  readonly never: string[];
  readonly request: string[];
  /** Complex attributes with sub-attributes left out, by attribute name (RFC 7643 §7 applies to them too). */
  readonly subs: Map<string, { readonly never: string[]; readonly request: string[] }>;
}

/** Declared attributes a response leaves out, per extension URN: returned "never", and "request" unless asked. */
const hiddenAttributes = (registry: SchemaRegistry, resource: ResourceName = "User") =>
  registry.memo(`${resource}.hidden`, () => {
    const hidden = new Map<string, Hidden>();
    for (const schema of registry.schemasFor(resource)) {
      const never = schema.attributes.filter((a) => a.returned === "never").map((a) => a.name);
      const request = schema.attributes.filter((a) => a.returned === "request").map((a) => a.name);
      const subs = new Map<string, { never: string[]; request: string[] }>();
      for (const a of schema.attributes) {
        const inner = a.subAttributes ?? [];
        const n = inner.filter((s) => s.returned === "never").map((s) => s.name);
        const r = inner.filter((s) => s.returned === "request").map((s) => s.name);
        if (n.length + r.length > 0) subs.set(a.name, { never: n, request: r });
      }
      if (never.length + request.length + subs.size > 0) hidden.set(schema.id, { never, request, subs });
    }
    return hidden;
  });

/** A complex value (or each of a multi-valued one) without the named sub-attributes. */
const withoutSubs = (value: unknown, names: readonly string[]): unknown => {
  if (Array.isArray(value)) return value.map((v) => withoutSubs(v, names));
  if (typeof value !== "object" || value === null) return value;
  const copy: Json = { ...(value as Json) };
  for (const name of names) delete copy[name];
  return copy;
};

/** Removes the hidden attributes of `out`'s extension objects in place (see hiddenAttributes). */
export function hiddenOf(
  registry: SchemaRegistry,
  out: Json,
  projection: Projection,
  resource: ResourceName = "User",
): void {
  const asked = projection.attributes !== undefined && projection.attributes.length > 0;
  for (const [urn, { never, request, subs }] of hiddenAttributes(registry, resource)) {
    const object = out[urn];
    if (typeof object !== "object" || object === null || Array.isArray(object)) continue;
    const copy: Json = { ...(object as Json) };
    for (const name of asked ? never : [...never, ...request]) delete copy[name];
    for (const [name, sub] of subs) {
      if (copy[name] !== undefined)
        copy[name] = withoutSubs(copy[name], asked ? sub.never : [...sub.never, ...sub.request]);
    }
    if (Object.keys(copy).length === 0) {
      delete out[urn];
      if (Array.isArray(out.schemas)) out.schemas = out.schemas.filter((s) => s !== urn);
    } else out[urn] = copy;
  }
}

/**
 * Whether a stored document whose `schemas` array reads `schemasText` (jsonb's text) may be sent as stored, without
 * per-key work: every URN in it is one this registry returns whole. The standard shapes are answered without parsing.
 */
export function isPlainSchemas(registry: SchemaRegistry, schemasText: string): boolean {
  if (schemasText === CORE_ONLY || schemasText === CORE_AND_ENTERPRISE) return true;
  const known = registry.memo("users.plain", () => new Map<string, boolean>());
  const hit = known.get(schemasText);
  if (hit !== undefined) return hit;
  let urns: unknown;
  try {
    urns = JSON.parse(schemasText);
  } catch {
    return false;
  }
  const hidden = hiddenAttributes(registry);
  const plain =
    Array.isArray(urns) &&
    urns.every((u) => typeof u === "string" && registry.findSchema(u)?.id === u && !hidden.has(u));
  // Bounded: the distinct `schemas` arrays of one client's users are few; a flood of odd ones stops being cached.
  if (known.size < 1000) known.set(schemasText, plain);
  return plain;
}
