import type {} from "@fastify/cookie";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ScimClientService } from "../../directory/scim-clients/service.js";
import type { SetupLinkService } from "../../directory/setup-links/service.js";
import { AdminError, notFound } from "../errors.js";
import { isObject, type JsonObject } from "../json.js";
import type { AdminPrincipal, SetupPrincipal } from "../tokens/types.js";
import { CSRF_HEADER, SETUP_COOKIE, type SetupSessionCodec } from "./session.js";

/** How many connections an organization may have for a setup link to create another. */
export const MAX_SETUP_CONNECTIONS = 10;

/** The admin routes a setup session may call (method and route, below the admin prefix); every other is 403. */
const ALLOWED = new Set([
  "GET /setupSession",
  "GET /scimClients",
  "POST /scimClients",
  "GET /scimClients/:clientId",
  "PATCH /scimClients/:clientId",
  "POST /scimClients/:clientId([^:/]+)::rotateSecret",
  "GET /scimClients/:clientId/requests",
  "GET /scimClients/:clientId/requests/:id",
  "GET /organizations/:orgId/users",
  "GET /organizations/:orgId/groups",
]);
/** What a setup session may set on a connection: no webhook, mapping, extensions or secret of its choosing. */
const CREATE_FIELDS = new Set(["organization_id", "name", "authentication_methods"]);
const PATCH_FIELDS = new Set(["name", "authentication_methods", "service_provider_config_pagination"]);
/**
 * What a setup session is not shown of a connection: the application's side of it — its webhook settings (a link,
 * or the organization, gives its connections the application's endpoint), the data mapping and the extension
 * declarations. The customer's IT admin has no use for them, and they may describe the application's internals.
 */
const HIDDEN_FIELDS = [
  "webhook",
  "tenant",
  "product",
  "log_webhook_events",
  "mapping",
  "extensions",
  "unknown_extensions",
];

const hide = (client: unknown): unknown =>
  isObject(client) ? Object.fromEntries(Object.entries(client).filter(([k]) => !HIDDEN_FIELDS.includes(k))) : client;

export interface SetupGuardDeps {
  readonly setupLinks: SetupLinkService;
  readonly sessions: SetupSessionCodec;
  readonly scimClients: ScimClientService;
}

/** The principal of a live setup session's cookie, or undefined when the request carries none. */
export async function setupPrincipalOf(req: FastifyRequest, deps: SetupGuardDeps): Promise<AdminPrincipal | undefined> {
  const cookie = req.cookies?.[SETUP_COOKIE];
  if (cookie === undefined || cookie === "") return undefined;
  const linkId = deps.sessions.verify(cookie);
  const link = linkId === undefined ? undefined : await deps.setupLinks.live(linkId);
  if (link === undefined) {
    throw new AdminError(
      "UNAUTHENTICATED",
      "the setup session has ended: open the setup link again, or ask for a new one",
    );
  }
  return { kind: "setup", role: "setup", linkId: link.id, organizationId: link.organizationId, cookie };
}

/** onRequest: the route must be one a setup session may call, and a write must carry the session's CSRF token. */
export function checkSetupRoute(req: FastifyRequest, principal: SetupPrincipal, prefix: string, deps: SetupGuardDeps) {
  const route = (req.routeOptions.url ?? "").slice(prefix.length);
  if (!ALLOWED.has(`${req.method} ${route}`)) {
    throw new AdminError("PERMISSION_DENIED", "a setup link's session may only manage its organization's connections");
  }
  if (req.method !== "GET" && req.method !== "HEAD") {
    const presented = req.headers[CSRF_HEADER];
    if (typeof presented !== "string" || !deps.sessions.checkCsrf(principal.cookie, presented)) {
      throw new AdminError("PERMISSION_DENIED", `a write of a setup session needs its ${CSRF_HEADER} header`);
    }
  }
  const query = req.query as Record<string, unknown>;
  if (route === "/scimClients" && req.method === "GET") {
    const asked = query.organization_id;
    if (typeof asked === "string" && asked !== "" && asked.toLowerCase() !== principal.organizationId) {
      throw notFound(`organization ${asked} does not exist`);
    }
    query.organization_id = principal.organizationId;
  }
  const params = req.params as Record<string, string | undefined>;
  if (params.orgId !== undefined && params.orgId.toLowerCase() !== principal.organizationId) {
    throw notFound(`organization ${params.orgId} does not exist`);
  }
}

/**
 * preHandler: another organization's connection is as missing as one that never existed; bodies stay narrow.
 * preSerialization: a session's answers about connections leave out the webhook settings (HIDDEN_FIELDS).
 */
export function installSetupScoping(scope: FastifyInstance, deps: SetupGuardDeps): void {
  scope.addHook("preSerialization", async (req, _reply, payload: unknown) => {
    if (req.adminPrincipal?.kind !== "setup" || !isObject(payload)) return payload;
    if (Array.isArray(payload.scim_clients)) return { ...payload, scim_clients: payload.scim_clients.map(hide) };
    return typeof payload.client_id === "string" ? (hide(payload) as JsonObject) : payload;
  });
  scope.addHook("preHandler", async (req) => {
    const principal = req.adminPrincipal;
    if (principal?.kind !== "setup") return;
    const clientId = (req.params as Record<string, string | undefined>).clientId;
    if (clientId !== undefined) {
      const client = await deps.scimClients.get(clientId);
      if (client === undefined || client.organizationId !== principal.organizationId) {
        throw notFound(`SCIM client ${clientId} does not exist`);
      }
    }
    const body = isObject(req.body) ? req.body : {};
    const allowed = req.method === "POST" && clientId === undefined ? CREATE_FIELDS : PATCH_FIELDS;
    if (req.method === "POST" && clientId === undefined) {
      const org = typeof body.organization_id === "string" ? body.organization_id.toLowerCase() : "";
      if (org !== principal.organizationId) throw notFound(`organization ${body.organization_id} does not exist`);
      const existing = await deps.scimClients.list(
        principal.organizationId,
        undefined,
        MAX_SETUP_CONNECTIONS,
        Number.MAX_SAFE_INTEGER,
      );
      if (existing.clients.length >= MAX_SETUP_CONNECTIONS) {
        throw new AdminError(
          "FAILED_PRECONDITION",
          `the organization has ${MAX_SETUP_CONNECTIONS} connections, the most a setup link may create`,
        );
      }
    }
    if (req.method === "POST" || req.method === "PATCH") {
      const fields = Object.keys(isObject(body.scim_client) ? body.scim_client : body);
      const mask = (req.query as Record<string, unknown>).update_mask;
      const masked = typeof mask === "string" ? mask.split(",").map((f) => f.trim()) : [];
      const refused = [...fields, ...masked].filter((f) => f !== "" && !allowed.has(f) && f !== "grace_period");
      if (refused.length > 0) {
        throw new AdminError("PERMISSION_DENIED", `a setup link's session may not set ${refused.join(", ")}`);
      }
    }
  });
}
