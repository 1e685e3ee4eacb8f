import type { FastifyInstance } from "fastify";
import { parseTime } from "../../apikeys/fields.js";
import type { Clock } from "../../platform/clock.js";
import { isUuid } from "../../platform/ids.js";
import { invalidArgument, notFound } from "../errors.js";
import { pageOf, parsePageRequest, requireUuid } from "../paging.js";
import { requireObject, requireString } from "../validate.js";
import type { AdminTokenService } from "./service.js";
import { ADMIN_ROLES, type AdminRole, type AdminToken, tokenStateOf } from "./types.js";

export interface AdminTokenRouteDeps {
  readonly tokens: AdminTokenService;
  readonly clock: Clock;
}

/** Named admin tokens: create (the token is shown once), list, get, revoke (DELETE). */
export function registerAdminTokenRoutes(scope: FastifyInstance, deps: AdminTokenRouteDeps): void {
  const { tokens, clock } = deps;
  const json = (t: AdminToken) => adminTokenJson(t, clock.now());
  const idOf = (raw: string): string => {
    if (!isUuid(raw)) throw notFound(`admin token ${raw} does not exist`);
    return raw.toLowerCase();
  };

  scope.post("/adminTokens", async (req, reply) => {
    const body = requireObject(req.body);
    const name = requireString(body, "name", 256);
    const role = body.role;
    if (typeof role !== "string" || !ADMIN_ROLES.includes(role as AdminRole)) {
      throw invalidArgument(`role must be one of ${ADMIN_ROLES.join(", ")}`);
    }
    const expireTime = parseTime(body.expire_time, "expire_time");
    if (expireTime !== null && expireTime.getTime() <= clock.now().getTime()) {
      throw invalidArgument("expire_time must be in the future");
    }
    const created = await tokens.create(name, role as AdminRole, expireTime);
    reply.code(201);
    return { ...json(created.token), token: created.secret };
  });

  scope.get("/adminTokens", async (req) => {
    const page = parsePageRequest(req.query as Record<string, unknown>);
    const after = page.after === undefined ? undefined : requireUuid(page.after, "page_token");
    const rows = await tokens.list(after, page.pageSize + 1);
    const { items, next_page_token } = pageOf(rows, page.pageSize, (t) => t.id);
    return { admin_tokens: items.map(json), next_page_token };
  });

  scope.get<{ Params: { id: string } }>("/adminTokens/:id", async (req) => {
    const token = await tokens.get(idOf(req.params.id));
    if (token === undefined) throw notFound(`admin token ${req.params.id} does not exist`);
    return json(token);
  });

  scope.delete<{ Params: { id: string } }>("/adminTokens/:id", async (req) => {
    const token = await tokens.revoke(idOf(req.params.id));
    if (token === undefined) throw notFound(`admin token ${req.params.id} does not exist`);
    return json(token);
  });
}

/** Never the token or its digest. */
export const adminTokenJson = (t: AdminToken, now: Date) => ({
  id: t.id,
  name: t.name,
  role: t.role,
  state: tokenStateOf(t, now),
  expire_time: t.expireTime?.toISOString() ?? null,
  revoke_time: t.revokeTime?.toISOString() ?? null,
  last_used_time: t.lastUsedTime?.toISOString() ?? null,
  create_time: t.createTime.toISOString(),
});
