import type { Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import {
  DEFAULT_SETUP_LINK_SECONDS,
  MAX_SETUP_LINK_SECONDS,
  type SetupLinkService,
} from "../../directory/setup-links/service.js";
import { type SetupLink, setupLinkStateOf } from "../../directory/setup-links/types.js";
import type { Clock } from "../../platform/clock.js";
import { invalidArgument, notFound } from "../errors.js";
import type { JsonObject } from "../json.js";
import { pageOf, parseOrgPageRequest, pathUuid } from "../paging.js";
import { parseTime } from "../routes/api-keys-fields.js";
import { allowedWebhookUrl, parseWebhook, retryOf, validateHttpUrl } from "../routes/scim-client-fields.js";
import { Empty, errors, pageSchema } from "../schemas/kit.js";
import { CreateSetupLinkBody, ListSetupLinksQuery, SetupLinkJson, SetupLinkParams } from "./schemas.js";

export interface SetupLinkRouteDeps {
  readonly setupLinks: SetupLinkService;
  readonly clock: Clock;
  readonly publicUrl: () => string;
  /** Why the outbound guard refuses a webhook URL (docs/security.md "Outbound requests"), or undefined. */
  readonly checkWebhookUrl: (url: string) => Promise<string | undefined>;
}

type ById = { Params: Static<typeof SetupLinkParams> };
const tags = ["Setup links"];

/** Setup links: create (the link with its token is shown once), list, get, revoke (DELETE). */
export function registerSetupLinkRoutes(scope: FastifyInstance, deps: SetupLinkRouteDeps): void {
  const { setupLinks, clock } = deps;
  const json = (l: SetupLink, extra: JsonObject = {}) => setupLinkJson(l, clock.now(), extra);
  const idOf = (raw: string): string => pathUuid(raw, "setup link");
  const existing = (link: SetupLink | undefined, raw: string): SetupLink => {
    if (link === undefined) throw notFound(`setup link ${raw} does not exist`);
    return link;
  };

  scope.post<{ Body: Static<typeof CreateSetupLinkBody> }>(
    "/setupLinks",
    { schema: { tags, body: CreateSetupLinkBody, response: { 201: SetupLinkJson, ...errors } } },
    async (req, reply) => {
      const now = clock.now().getTime();
      const given = parseTime(req.body.expire_time, "expire_time");
      const expireTime = given ?? new Date(now + DEFAULT_SETUP_LINK_SECONDS * 1000);
      if (expireTime.getTime() <= now) throw invalidArgument("expire_time must be in the future");
      if (expireTime.getTime() > now + MAX_SETUP_LINK_SECONDS * 1000) {
        throw invalidArgument("expire_time must be at most 30 days from now");
      }
      const returnUrl =
        req.body.return_url === undefined || req.body.return_url === null || req.body.return_url === ""
          ? null
          : validateHttpUrl(req.body.return_url, "return_url");
      const organizationId = req.body.organization_id.toLowerCase();
      const webhook = await linkWebhookOf(req.body.webhook, deps.checkWebhookUrl);
      const created = await setupLinks.create({
        organizationId,
        intent: req.body.intent,
        expireTime,
        returnUrl,
        webhook,
        tenant: req.body.tenant ?? "",
        product: req.body.product ?? "",
      });
      reply.code(201);
      // The token is in the URL only, shown once: Roster keeps its digest.
      return json(created.link, { url: `${deps.publicUrl()}/portal/setup/${created.token}` });
    },
  );

  scope.get<{ Querystring: Static<typeof ListSetupLinksQuery> }>(
    "/setupLinks",
    { schema: pageSchema(tags, ListSetupLinksQuery, "setup_links", SetupLinkJson) },
    async (req) => {
      const page = parseOrgPageRequest(req.query);
      const rows = await setupLinks.list(page.orgId, page.after, page.pageSize + 1);
      const { items, next_page_token } = pageOf(rows, page.pageSize, (l) => l.id);
      return { setup_links: items.map((l) => json(l)), next_page_token };
    },
  );

  scope.get<ById>(
    "/setupLinks/:id",
    { schema: { tags, params: SetupLinkParams, response: { 200: SetupLinkJson, ...errors } } },
    async (req) => {
      return json(existing(await setupLinks.get(idOf(req.params.id)), req.params.id));
    },
  );

  scope.delete<ById>(
    "/setupLinks/:id",
    { schema: { tags, params: SetupLinkParams, response: { 200: Empty, ...errors } } },
    async (req) => {
      existing(await setupLinks.revoke(idOf(req.params.id)), req.params.id);
      return {};
    },
  );
}

/**
 * A link's webhook, checked as a connection's is (URL syntax, the outbound guard, the secret's length); unlike a
 * connection's it needs its secret: the link's connections deliver from their first event on, and never unsigned.
 */
async function linkWebhookOf(
  given: Static<typeof CreateSetupLinkBody>["webhook"],
  checkWebhookUrl: SetupLinkRouteDeps["checkWebhookUrl"],
) {
  const webhook = parseWebhook(given);
  if (webhook === null) return null;
  if (webhook.secret === null) throw invalidArgument("webhook.secret is required with a webhook.url on a setup link");
  await allowedWebhookUrl(checkWebhookUrl, webhook.url);
  return { url: webhook.url, secret: webhook.secret, retry: retryOf(given?.retry) };
}

export const setupLinkJson = (l: SetupLink, now: Date, extra: JsonObject = {}): JsonObject => ({
  id: l.id,
  organization_id: l.organizationId,
  intent: l.intent,
  state: setupLinkStateOf(l, now),
  return_url: l.returnUrl,
  create_time: l.createTime.toISOString(),
  expire_time: l.expireTime.toISOString(),
  revoke_time: l.revokeTime?.toISOString() ?? null,
  first_open_time: l.firstOpenTime?.toISOString() ?? null,
  tenant: l.tenant,
  product: l.product,
  webhook: l.webhook === null ? null : { url: l.webhook.url, retry: l.webhook.retry },
  ...extra,
});
