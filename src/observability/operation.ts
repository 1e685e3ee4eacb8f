/**
 * Bounded operation names for metrics, log lines and span names: `users.create`, `groups.patch`, `users.list`,
 * `discovery.schemas`; `admin` routes as `scimClients.update`. Derived from the route's template (never the URL a
 * client sent) and cached per route, so a request costs one map lookup.
 */
const cache = new Map<string, string>();
const MAX_CACHED = 512;

const SCIM_VERBS: Record<string, readonly [collection: string, item: string]> = {
  GET: ["list", "get"],
  HEAD: ["list", "get"],
  POST: ["create", "post"],
  PUT: ["put", "replace"],
  PATCH: ["patch", "patch"],
  DELETE: ["delete", "delete"],
};

const DISCOVERY = new Set(["serviceproviderconfig", "schemas", "resourcetypes"]);

/** `GET /scim/:clientId/v2/Users/:id` → `users.get`; a URL no route matched → `unmatched`. */
export function scimOperation(method: string, routeUrl: string | undefined): string {
  if (routeUrl === undefined) return "unmatched";
  const key = `${method} ${routeUrl}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const rest = routeUrl.replace(/^\/scim\/:clientId\/v2\/?/i, "").split("/");
  const resource = (rest[0] ?? "").toLowerCase();
  const item = rest.length > 1;
  let name: string;
  if (DISCOVERY.has(resource)) name = `discovery.${resource}`;
  else if (resource === "users" || resource === "groups") {
    const verbs = SCIM_VERBS[method];
    name = verbs === undefined ? `${resource}.other` : `${resource}.${verbs[item ? 1 : 0]}`;
  } else name = "other";
  return remember(key, name);
}

const ADMIN_VERBS: Record<string, readonly [collection: string, item: string]> = {
  GET: ["list", "get"],
  HEAD: ["list", "get"],
  POST: ["create", "create"],
  PUT: ["replace", "replace"],
  PATCH: ["update", "update"],
  DELETE: ["delete", "delete"],
};

/**
 * `PATCH /v2alpha1/admin/scimClients/:clientId` → `scimClients.update`; `POST …/apiKeys:verify` → `apiKeys.verify`;
 * `GET …/scimClients/:clientId/requests` → `scimClients.requests.list`.
 */
export function adminOperation(method: string, routeUrl: string | undefined): string {
  if (routeUrl === undefined) return "unmatched";
  const key = `${method} ${routeUrl}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  // A parameter's regex (`:keyId([^:/]+)`) may hold slashes and colons: drop it before splitting.
  const segments = routeUrl
    .replace(/^\/v2alpha1\/admin\/?/, "")
    .replace(/\([^)]*\)/g, "")
    .split("/");
  const names: string[] = [];
  let custom: string | undefined;
  for (const segment of segments) {
    // A custom method follows an escaped colon: `importedApiKeys::batchCreate`, `:keyId([^:/]+)::rotate`.
    const colons = segment.lastIndexOf("::");
    if (colons > 0) custom = segment.slice(colons + 2);
    if (segment.startsWith(":")) continue;
    const name = colons > 0 ? segment.slice(0, colons) : segment;
    if (name !== "") names.push(name);
  }
  const last = segments[segments.length - 1] ?? "";
  const verbs = ADMIN_VERBS[method] ?? ["other", "other"];
  const verb = custom ?? verbs[last.startsWith(":") ? 1 : 0];
  return remember(key, `${names.join(".") || "root"}.${verb}`);
}

function remember(key: string, name: string): string {
  if (cache.size < MAX_CACHED) cache.set(key, name);
  return name;
}
