import type { StoredUser } from "../../directory/identities/types.js";
import { etagOf } from "../etag.js";
import { type Projection, project } from "../query/projection.js";
import {
  COMMON_ATTRIBUTES,
  CORE_REGISTRY,
  ENTERPRISE_USER_SCHEMA,
  type SchemaRegistry,
  schemasFor,
} from "../schema/registry.js";
import { hiddenOf, knownSchemas, rankOf, VERBATIM_RANK } from "./extension-render.js";

type Json = Record<string, unknown>;

/** Response key order: schemas, id, externalId, the core attributes in registry order, extensions, meta. */
const [CORE, ...EXTENSIONS] = schemasFor("User");
const ORDER = [
  "schemas",
  "id",
  ...COMMON_ATTRIBUTES.map((a) => a.name).filter((n) => n !== "id" && n !== "meta"),
  ...(CORE?.attributes ?? []).map((a) => a.name),
  ...EXTENSIONS.map((s) => s.id),
];
/** Each key's place in ORDER; keys without one are not returned. */
const CORE_RANK: ReadonlyMap<string, number> = new Map(ORDER.map((key, i) => [key, i]));

export const userLocation = (baseUrl: string, id: string): string => `${baseUrl}/Users/${id}`;

/**
 * The stored document plus what the server owns — `id`, `groups` (direct memberships, when loaded),
 * the manager's read-only displayName and `meta` — then the projection of RFC 7644 §3.9.
 */
export function renderUser(
  user: StoredUser,
  baseUrl: string,
  projection: Projection,
  registry: SchemaRegistry = CORE_REGISTRY,
): Json {
  // The stored document's own keys (a handful), sorted into ORDER: cheaper than probing every key ORDER names.
  const scim = user.document.value as Json;
  const own: Json = { id: user.id };
  const RANK = registry === CORE_REGISTRY ? CORE_RANK : rankOf(registry, ORDER);
  const rank = (key: string): number | undefined =>
    RANK.get(key) ?? (registry.storeUnknown && key.toLowerCase().startsWith("urn:") ? VERBATIM_RANK : undefined);
  const byRank = (a: string, b: string): number => (rank(a) ?? 0) - (rank(b) ?? 0);
  const enterprise = scim[ENTERPRISE_USER_SCHEMA];
  if (user.managerDisplayName !== null && isJson(enterprise) && isJson(enterprise.manager)) {
    own[ENTERPRISE_USER_SCHEMA] = {
      ...enterprise,
      manager: { ...enterprise.manager, displayName: user.managerDisplayName },
    };
  }
  const groups = user.groups ?? [];
  if (groups.length > 0) own.groups = groups.map((g) => ({ value: g.groupId, display: g.displayName, type: "direct" }));
  const keys = Object.keys(own);
  for (const key of Object.keys(scim))
    if (!Object.hasOwn(own, key) && rank(key) !== undefined && scim[key] !== undefined) keys.push(key);
  keys.sort(byRank);
  const out: Json = {};
  for (const key of keys) out[key] = Object.hasOwn(own, key) ? own[key] : scim[key];
  // Another client's extensions stay out of `schemas` as they stay out of the body; declared attributes returned
  // "never" (or "request", unless asked for) are left out (RFC 7643 §7).
  if (Array.isArray(out.schemas) && out.schemas.length > 1) out.schemas = knownSchemas(out, out.schemas);
  if (registry !== CORE_REGISTRY) hiddenOf(registry, out, projection);
  out.meta = {
    resourceType: "User",
    created: user.createdAt,
    lastModified: user.updatedAt,
    location: userLocation(baseUrl, user.id),
    version: etagOf(user.version),
  };
  return project("User", out, projection, registry);
}

const isJson = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
