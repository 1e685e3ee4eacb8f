import type { Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { MAX_SECRET_GRACE_SECONDS, type ScimClientService } from "../../directory/scim-clients/service.js";
import type { ScimClient, ScimClientChanges, WebhookRetry } from "../../directory/scim-clients/types.js";
import type { GuardSettings } from "../../directory/deprovisioning-guard/types.js";
import { randomToken } from "../../platform/ids.js";
import { invalidArgument, notFound } from "../errors.js";
import { isObject, type JsonObject } from "../json.js";
import { encodePageToken, MAX_PAGE_BYTES, parseOrgPageRequest } from "../paging.js";
import { GUARD_MASK_PATHS } from "../schemas/deprovisioning-guard.js";
import { Empty, errors, pageSchema } from "../schemas/kit.js";
import {
  ClientParams,
  CreateScimClientBody,
  ListClientsQuery,
  RotateSecretBody,
  ScimClientJson,
  type ScimClientPatch,
  UpdateMaskQuery,
  UpdateScimClientBody,
} from "../schemas/scim-clients.js";
import { type FieldUpdate, type MaskSpec, resolveUpdateMask } from "../update-mask.js";
import { parseDuration } from "./api-keys-fields.js";
import { guardAfterUpdates } from "./deprovisioning-guard.js";
import {
  allowedWebhookUrl,
  authMethodsOf,
  extensionsOf,
  parseWebhook,
  retryOf,
  scimClientJson,
  unknownExtensionsOf,
  validateHttpUrl,
  validateSharedSecret,
  validateWebhookSecret,
} from "./scim-client-fields.js";

export const SCIM_CLIENT_MASK: MaskSpec = {
  mutable: [
    "name",
    "secret",
    "auto_link",
    "mapping",
    "tenant",
    "product",
    "webhook",
    "webhook.url",
    "webhook.secret",
    "webhook.retry",
    "log_webhook_events",
    "request_log",
    "extensions",
    "unknown_extensions",
    "authentication_methods",
    "service_provider_config_pagination",
    "group_patch_response",
    ...GUARD_MASK_PATHS,
  ],
  immutable: [
    "client_id",
    "organization_id",
    "scim_base_url",
    "create_time",
    "update_time",
    "secret_rotate_time",
    "previous_secret_expire_time",
    "previous_secret_last_used_time",
    "activated_time",
    "basic_username",
    "oauth_token_url",
  ],
};

export interface ScimClientRouteDeps {
  readonly scimClients: ScimClientService;
  readonly publicUrl: () => string;
  /** Validates a data mapping (expression or URL) before it is stored; throws INVALID_ARGUMENT. */
  readonly validateMapping: (mapping: string) => Promise<void>;
  /** Why the outbound guard refuses a webhook URL (docs/security.md "Outbound requests"), or undefined. */
  readonly checkWebhookUrl: (url: string) => Promise<string | undefined>;
  /** The connection's health fields (last request, counts of the last 24 h) for the single-client read. */
  readonly health?: (clientId: string) => Promise<JsonObject>;
  /** The connection's deprovisioning guard: its settings, and setting them (answers the guard as the API shows it). */
  readonly guard?: {
    readonly settings: (clientId: string) => Promise<GuardSettings>;
    readonly configure: (clientId: string, settings: GuardSettings) => Promise<JsonObject>;
  };
}

type ByClient = { Params: Static<typeof ClientParams> };
type Patch = Static<typeof ScimClientPatch>;
const tags = ["SCIM clients"];
const one = { tags, params: ClientParams, response: { 200: ScimClientJson, ...errors } };

export function registerScimClientRoutes(scope: FastifyInstance, deps: ScimClientRouteDeps): void {
  const { scimClients } = deps;
  const json = (c: ScimClient, extra: JsonObject = {}) => scimClientJson(c, deps.publicUrl(), extra);

  scope.post<{ Body: Static<typeof CreateScimClientBody> }>(
    "/scimClients",
    { schema: { tags, body: CreateScimClientBody, response: { 201: ScimClientJson, ...errors } } },
    async (req, reply) => {
      const body = req.body;
      const organizationId = body.organization_id.toLowerCase();
      const clientId = body.client_id ?? randomToken(12);
      const givenSecret = body.secret ?? undefined;
      if (givenSecret !== undefined) validateSharedSecret(givenSecret);
      const secret = givenSecret ?? randomToken(32);
      const mapping = body.mapping ?? null;
      if (mapping !== null) await deps.validateMapping(mapping);
      const webhook = parseWebhook(body.webhook);
      if (webhook !== null) await allowedWebhookUrl(deps.checkWebhookUrl, webhook.url);
      const client = await scimClients.create({
        organizationId,
        clientId,
        secret,
        name: body.name ?? "",
        autoLink: body.auto_link ?? false,
        mapping,
        tenant: body.tenant ?? "",
        product: body.product ?? "",
        webhook,
        webhookRetry: retryOf(body.webhook?.retry),
        logWebhookEvents: body.log_webhook_events ?? false,
        requestLog: body.request_log ?? "errors",
        extensions: extensionsOf(body.extensions),
        unknownExtensions: unknownExtensionsOf(body.unknown_extensions),
        authMethods: authMethodsOf(body.authentication_methods),
        spcPagination: body.service_provider_config_pagination ?? true,
        groupPatchResponse: body.group_patch_response ?? "no_content",
        // A setup link's session: the connection starts with the link's webhook (docs/setup-links.md).
        ...(req.adminPrincipal?.kind === "setup" ? { setupLinkId: req.adminPrincipal.linkId } : {}),
      });
      reply.code(201);
      const guardUpdate = { path: "deprovisioning_guard", value: body.deprovisioning_guard };
      const guard = body.deprovisioning_guard === undefined ? {} : await configureGuard(deps, clientId, [guardUpdate]);
      // The secret is shown once, and only when Roster generated it.
      return json(client, { ...guard, ...(givenSecret === undefined ? { secret } : {}) });
    },
  );

  scope.get<{ Querystring: Static<typeof ListClientsQuery> }>(
    "/scimClients",
    { schema: pageSchema(tags, ListClientsQuery, "scim_clients", ScimClientJson) },
    async (req) => {
      const page = parseOrgPageRequest(req.query);
      const { clients, more } = await scimClients.list(page.orgId, page.after, page.pageSize, MAX_PAGE_BYTES);
      const last = clients.at(-1);
      const next_page_token = more && last !== undefined ? encodePageToken(last.clientId) : "";
      return { scim_clients: clients.map((c) => json(c)), next_page_token };
    },
  );

  scope.get<ByClient>("/scimClients/:clientId", { schema: one }, async (req) => {
    const client = await scimClients.get(req.params.clientId);
    if (client === undefined) throw notFound(`SCIM client ${req.params.clientId} does not exist`);
    return json(client, deps.health === undefined ? {} : await deps.health(client.clientId));
  });

  scope.patch<ByClient & { Body: Static<typeof UpdateScimClientBody>; Querystring: Static<typeof UpdateMaskQuery> }>(
    "/scimClients/:clientId",
    { schema: { ...one, body: UpdateScimClientBody, querystring: UpdateMaskQuery } },
    async (req) => {
      const raw = req.body;
      const body: Patch = isObject(raw.scim_client) ? raw.scim_client : raw;
      if (typeof body.client_id === "string" && body.client_id !== req.params.clientId) {
        throw invalidArgument("client_id in the body differs from the one in the path");
      }
      const updates = resolveUpdateMask(req.query.update_mask, body, SCIM_CLIENT_MASK);
      const changes = await toChanges(updates, deps);
      if (typeof changes.webhookUrl === "string") await allowedWebhookUrl(deps.checkWebhookUrl, changes.webhookUrl);
      const existing = await scimClients.get(req.params.clientId);
      if (existing === undefined) throw notFound(`SCIM client ${req.params.clientId} does not exist`);
      if (changes.webhookSecret !== undefined && changes.webhookSecret !== null) {
        const url = changes.webhookUrl === undefined ? existing.webhookUrl : changes.webhookUrl;
        if (url === null) throw invalidArgument("webhook.secret needs a webhook.url");
      }
      const updated = await scimClients.update(req.params.clientId, changes);
      if (updated === undefined) throw notFound(`SCIM client ${req.params.clientId} does not exist`);
      return json(updated, await configureGuard(deps, updated.clientId, updates));
    },
  );

  /**
   * A new generated secret, shown once; with `grace_period` the replaced secret keeps working until it ends (so the
   * IdP can be updated without an outage), without one it stops at once. The colon is escaped for Fastify's router.
   */
  scope.post<ByClient & { Body: Static<typeof RotateSecretBody> | null }>(
    "/scimClients/:clientId([^:/]+)::rotateSecret",
    { schema: { ...one, body: RotateSecretBody } },
    async (req) => {
      const period = req.body?.grace_period;
      const grace =
        period === undefined || period === null ? 0 : parseDuration(period, "grace_period", MAX_SECRET_GRACE_SECONDS);
      const secret = randomToken(32);
      const rotated = await scimClients.rotateSecret(req.params.clientId, secret, grace);
      if (rotated === undefined) throw notFound(`SCIM client ${req.params.clientId} does not exist`);
      return json(rotated, { secret });
    },
  );

  scope.delete<ByClient>(
    "/scimClients/:clientId",
    { schema: { tags, params: ClientParams, response: { 200: Empty, ...errors } } },
    async (req) => {
      if (!(await scimClients.delete(req.params.clientId))) {
        throw notFound(`SCIM client ${req.params.clientId} does not exist`);
      }
      return {};
    },
  );
}

/** Applies the `deprovisioning_guard` updates, if any: the guard as the answer shows it, else nothing. */
async function configureGuard(deps: ScimClientRouteDeps, clientId: string, updates: readonly FieldUpdate[]) {
  if (deps.guard === undefined || !updates.some((u) => u.path.startsWith("deprovisioning_guard"))) return {};
  const settings = guardAfterUpdates(await deps.guard.settings(clientId), updates);
  return settings === undefined ? {} : { deprovisioning_guard: await deps.guard.configure(clientId, settings) };
}

/** The masked fields as changes; their types are the schema's, an empty value (`""`, null, `{}`) is undefined. */
async function toChanges(updates: readonly FieldUpdate[], deps: ScimClientRouteDeps): Promise<ScimClientChanges> {
  const changes: ScimClientChanges = {};
  for (const { path, value } of updates) {
    const text = (value as string | undefined) ?? "";
    switch (path) {
      case "name":
      case "tenant":
      case "product":
        changes[path] = text;
        break;
      case "secret":
        if (value === undefined) throw invalidArgument("secret cannot be cleared; give a new one");
        changes.secret = validateSharedSecret(text);
        break;
      case "auto_link":
        changes.autoLink = value === true;
        break;
      case "log_webhook_events":
        changes.logWebhookEvents = value === true;
        break;
      case "mapping":
        changes.mapping = value === undefined ? null : text;
        if (changes.mapping !== null) await deps.validateMapping(changes.mapping);
        break;
      case "request_log":
        changes.requestLog = (value as Patch["request_log"]) ?? "errors";
        break;
      case "group_patch_response":
        changes.groupPatchResponse = (value as Patch["group_patch_response"]) ?? "no_content";
        break;
      case "webhook.url":
        changes.webhookUrl = value === undefined ? null : validateHttpUrl(text, path);
        if (changes.webhookUrl === null) changes.webhookSecret = null;
        break;
      case "webhook.secret":
        changes.webhookSecret = value === undefined ? null : validateWebhookSecret(text);
        break;
      case "extensions":
        changes.extensions = extensionsOf(value as Patch["extensions"]);
        break;
      case "unknown_extensions":
        changes.unknownExtensions = unknownExtensionsOf(value as Patch["unknown_extensions"]);
        break;
      case "authentication_methods":
        changes.authMethods = authMethodsOf(value as Patch["authentication_methods"]);
        break;
      case "service_provider_config_pagination":
        changes.spcPagination = value !== false;
        break;
      case "webhook.retry":
        changes.webhookRetry = retryOf(value as WebhookRetry | undefined);
        break;
      case "webhook": {
        // AIP-161: naming the sub-object replaces it whole; an omitted secret is cleared.
        const webhook = parseWebhook(value as Patch["webhook"]);
        changes.webhookUrl = webhook?.url ?? null;
        changes.webhookSecret = webhook?.secret ?? null;
        changes.webhookRetry = retryOf((value as Patch["webhook"])?.retry);
        break;
      }
    }
  }
  return changes;
}
