import type { Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Clock } from "../../platform/clock.js";
import { invalidArgument, notFound } from "../errors.js";
import { pageOf, parsePageRequest, pathUuid, requireUuid } from "../paging.js";
import { parseTime } from "../routes/api-keys-fields.js";
import { AdminTokenJson, CreateAdminTokenBody, IdParams, PageOnlyQuery } from "../schemas/directory.js";
import { errors, Page } from "../schemas/kit.js";
import type { AdminTokenService } from "./service.js";
import { type AdminToken, tokenStateOf } from "./types.js";

export interface AdminTokenRouteDeps {
  readonly tokens: AdminTokenService;
  readonly clock: Clock;
}

type ById = { Params: Static<typeof IdParams> };
const tags = ["Admin tokens"];
const one = { tags, params: IdParams, response: { 200: AdminTokenJson, ...errors } };

/** Named admin tokens: create (the token is shown once), list, get, revoke (DELETE). */
export function registerAdminTokenRoutes(scope: FastifyInstance, deps: AdminTokenRouteDeps): void {
  const { tokens, clock } = deps;
  const json = (t: AdminToken) => adminTokenJson(t, clock.now());
  const idOf = (raw: string): string => pathUuid(raw, "admin token");

  scope.post<{ Body: Static<typeof CreateAdminTokenBody> }>(
    "/adminTokens",
    { schema: { tags, body: CreateAdminTokenBody, response: { 201: AdminTokenJson, ...errors } } },
    async (req, reply) => {
      const { name, role } = req.body;
      const expireTime = parseTime(req.body.expire_time, "expire_time");
      if (expireTime !== null && expireTime.getTime() <= clock.now().getTime()) {
        throw invalidArgument("expire_time must be in the future");
      }
      const created = await tokens.create(name, role, expireTime);
      reply.code(201);
      return { ...json(created.token), token: created.secret };
    },
  );

  const list = { tags, querystring: PageOnlyQuery, response: { 200: Page("admin_tokens", AdminTokenJson), ...errors } };
  scope.get<{ Querystring: Static<typeof PageOnlyQuery> }>("/adminTokens", { schema: list }, async (req) => {
    const page = parsePageRequest(req.query);
    const after = page.after === undefined ? undefined : requireUuid(page.after, "page_token");
    const rows = await tokens.list(after, page.pageSize + 1);
    const { items, next_page_token } = pageOf(rows, page.pageSize, (t) => t.id);
    return { admin_tokens: items.map(json), next_page_token };
  });

  scope.get<ById>("/adminTokens/:id", { schema: one }, async (req) => {
    const token = await tokens.get(idOf(req.params.id));
    if (token === undefined) throw notFound(`admin token ${req.params.id} does not exist`);
    return json(token);
  });

  scope.delete<ById>("/adminTokens/:id", { schema: one }, async (req) => {
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
