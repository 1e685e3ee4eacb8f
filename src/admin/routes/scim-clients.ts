import type { FastifyInstance } from "fastify";
import { parseDuration } from "../../apikeys/fields.js";
import {
  ExtensionDeclarationError,
  type ExtensionDeclaration,
  parseExtensions,
  type UnknownExtensions,
} from "../../directory/scim-clients/extensions.js";
import { MAX_SECRET_GRACE_SECONDS, type ScimClientService } from "../../directory/scim-clients/service.js";
import {
  type ScimClient,
  type ScimClientChanges,
  WEBHOOK_RETRY_MODES,
  type WebhookRetry,
} from "../../directory/scim-clients/types.js";
import { randomToken } from "../../platform/ids.js";
import type { RequestLogMode } from "../../storage/schema.js";
import { AdminError, invalidArgument, notFound } from "../errors.js";
import { first, pageOf, parsePageRequest, requireUuid } from "../paging.js";
import { type MaskSpec, resolveUpdateMask } from "../update-mask.js";
import {
  isObject,
  type JsonObject,
  optionalBoolean,
  optionalObject,
  optionalString,
  requireObject,
  requireString,
  validateHttpUrl,
} from "../validate.js";

const CLIENT_ID_RE = /^[A-Za-z0-9._~-]{1,128}$/;

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
  ],
};

/** Webhook secrets sign every delivery: shorter ones are guessable offline from a single signed request. */
export const MIN_WEBHOOK_SECRET_LENGTH = 16;

export interface ScimClientRouteDeps {
  readonly scimClients: ScimClientService;
  readonly publicUrl: () => string;
  /** Validates a data mapping (expression or URL) before it is stored; throws INVALID_ARGUMENT. */
  readonly validateMapping: (mapping: string) => Promise<void>;
  /** The connection's health fields (last request, counts of the last 24 h) for the single-client read. */
  readonly health?: (clientId: string) => Promise<JsonObject>;
}

export function registerScimClientRoutes(scope: FastifyInstance, deps: ScimClientRouteDeps): void {
  const { scimClients } = deps;
  const json = (c: ScimClient, extra: JsonObject = {}) => scimClientJson(c, deps.publicUrl(), extra);

  scope.post("/scimClients", async (req, reply) => {
    const body = requireObject(req.body);
    const organizationId = requireUuid(requireString(body, "organization_id"), "organization_id");
    const clientId = optionalString(body, "client_id", 128) ?? randomToken(12);
    if (!CLIENT_ID_RE.test(clientId)) {
      throw invalidArgument("client_id may use only letters, digits and . _ ~ - (at most 128 characters)");
    }
    const givenSecret = optionalString(body, "secret", 1024);
    if (givenSecret !== undefined) validateSharedSecret(givenSecret);
    const secret = givenSecret ?? randomToken(32);
    const mapping = optionalString(body, "mapping", 256 * 1024) ?? null;
    if (mapping !== null) await deps.validateMapping(mapping);
    const result = await scimClients.create({
      organizationId,
      clientId,
      secret,
      name: optionalString(body, "name", 256) ?? "",
      autoLink: optionalBoolean(body, "auto_link") ?? false,
      mapping,
      tenant: optionalString(body, "tenant", 256) ?? "",
      product: optionalString(body, "product", 256) ?? "",
      webhook: parseWebhook(optionalObject(body, "webhook")),
      webhookRetry: parseRetry(optionalObject(body, "webhook")?.retry, "webhook.retry"),
      logWebhookEvents: optionalBoolean(body, "log_webhook_events") ?? false,
      requestLog: parseRequestLogMode(body.request_log) ?? "errors",
      extensions: extensionsOf(body.extensions),
      unknownExtensions: unknownExtensionsOf(body.unknown_extensions),
    });
    if (!result.ok) {
      if (result.reason === "client_exists") throw new AdminError("ALREADY_EXISTS", `client_id ${clientId} is taken`);
      throw notFound(`organization ${organizationId} does not exist`);
    }
    reply.code(201);
    // The secret is shown once, and only when Roster generated it.
    return json(result.client, givenSecret === undefined ? { secret } : {});
  });

  scope.get("/scimClients", async (req) => {
    const query = req.query as Record<string, unknown>;
    const page = parsePageRequest(query);
    const org = first(query.organization_id);
    const rows = await scimClients.list(
      org === undefined || org === "" ? undefined : requireUuid(org, "organization_id"),
      page.after,
      page.pageSize + 1,
    );
    const { items, next_page_token } = pageOf(rows, page.pageSize, (c) => c.clientId);
    return { scim_clients: items.map((c) => json(c)), next_page_token };
  });

  scope.get<{ Params: { clientId: string } }>("/scimClients/:clientId", async (req) => {
    const client = await scimClients.get(req.params.clientId);
    if (client === undefined) throw notFound(`SCIM client ${req.params.clientId} does not exist`);
    return json(client, deps.health === undefined ? {} : await deps.health(client.clientId));
  });

  scope.patch<{ Params: { clientId: string } }>("/scimClients/:clientId", async (req) => {
    const raw = requireObject(req.body);
    const body = isObject(raw.scim_client) ? raw.scim_client : raw;
    if (typeof body.client_id === "string" && body.client_id !== req.params.clientId) {
      throw invalidArgument("client_id in the body differs from the one in the path");
    }
    const mask = first((req.query as Record<string, unknown>).update_mask);
    const updates = resolveUpdateMask(mask, body, SCIM_CLIENT_MASK);
    const changes = await toChanges(updates, deps);
    const existing = await scimClients.get(req.params.clientId);
    if (existing === undefined) throw notFound(`SCIM client ${req.params.clientId} does not exist`);
    if (changes.webhookSecret !== undefined && changes.webhookSecret !== null) {
      const url = changes.webhookUrl === undefined ? existing.webhookUrl : changes.webhookUrl;
      if (url === null) throw invalidArgument("webhook.secret needs a webhook.url");
    }
    const updated = await scimClients.update(req.params.clientId, changes);
    if (updated === undefined) throw notFound(`SCIM client ${req.params.clientId} does not exist`);
    return json(updated);
  });

  /**
   * A new generated secret, shown once; with `grace_period` the replaced secret keeps working until it ends (so the
   * IdP can be updated without an outage), without one it stops at once. The colon is escaped for Fastify's router.
   */
  scope.post<{ Params: { clientId: string } }>("/scimClients/:clientId([^:/]+)::rotateSecret", async (req) => {
    const body = req.body === undefined || req.body === null ? {} : requireObject(req.body);
    const grace =
      body.grace_period === undefined || body.grace_period === null
        ? 0
        : parseDuration(body.grace_period, "grace_period", MAX_SECRET_GRACE_SECONDS);
    const secret = randomToken(32);
    const rotated = await scimClients.rotateSecret(req.params.clientId, secret, grace);
    if (rotated === undefined) throw notFound(`SCIM client ${req.params.clientId} does not exist`);
    return json(rotated, { secret });
  });

  scope.delete<{ Params: { clientId: string } }>("/scimClients/:clientId", async (req) => {
    if (!(await scimClients.delete(req.params.clientId))) {
      throw notFound(`SCIM client ${req.params.clientId} does not exist`);
    }
    return {};
  });
}

async function toChanges(
  updates: ReturnType<typeof resolveUpdateMask>,
  deps: ScimClientRouteDeps,
): Promise<ScimClientChanges> {
  const changes: ScimClientChanges = {};
  const str = (v: unknown, field: string): string => {
    if (v === undefined) return "";
    if (typeof v !== "string") throw invalidArgument(`${field} must be a string`);
    return v;
  };
  for (const { path, value } of updates) {
    switch (path) {
      case "name":
        changes.name = str(value, path);
        break;
      case "secret":
        if (value === undefined) throw invalidArgument("secret cannot be cleared; give a new one");
        changes.secret = validateSharedSecret(str(value, path));
        break;
      case "auto_link":
      case "log_webhook_events": {
        if (value !== undefined && typeof value !== "boolean") throw invalidArgument(`${path} must be a boolean`);
        const flag = value === true;
        if (path === "auto_link") changes.autoLink = flag;
        else changes.logWebhookEvents = flag;
        break;
      }
      case "mapping":
        changes.mapping = value === undefined ? null : str(value, path);
        if (changes.mapping !== null) await deps.validateMapping(changes.mapping);
        break;
      case "request_log":
        changes.requestLog = parseRequestLogMode(value) ?? "errors";
        break;
      case "tenant":
        changes.tenant = str(value, path);
        break;
      case "product":
        changes.product = str(value, path);
        break;
      case "webhook.url":
        changes.webhookUrl = value === undefined ? null : validateHttpUrl(str(value, path), path);
        if (changes.webhookUrl === null) changes.webhookSecret = null;
        break;
      case "webhook.secret":
        changes.webhookSecret = value === undefined || value === "" ? null : validateWebhookSecret(str(value, path));
        break;
      case "extensions":
        changes.extensions = extensionsOf(value);
        break;
      case "unknown_extensions":
        changes.unknownExtensions = unknownExtensionsOf(value);
        break;
      case "webhook.retry":
        changes.webhookRetry = parseRetry(value, path);
        break;
      case "webhook": {
        // AIP-161: naming the sub-object replaces it whole; an omitted secret is cleared.
        const webhook = parseWebhook(value === undefined ? undefined : requireObject(value, path));
        changes.webhookUrl = webhook?.url ?? null;
        changes.webhookSecret = webhook?.secret ?? null;
        changes.webhookRetry = parseRetry(isObject(value) ? value.retry : undefined, "webhook.retry");
        break;
      }
    }
  }
  return changes;
}

function extensionsOf(value: unknown): ExtensionDeclaration[] {
  try {
    return parseExtensions(value);
  } catch (e) {
    if (e instanceof ExtensionDeclarationError) throw invalidArgument(e.message);
    throw e;
  }
}

/** docs/scim-extensions.md: "reject" (the default) answers 400 to an undeclared schema URN; "store" keeps it. */
function unknownExtensionsOf(value: unknown): UnknownExtensions {
  if (value === undefined || value === null || value === "reject") return "reject";
  if (value === "store") return "store";
  throw invalidArgument('unknown_extensions must be "reject" or "store"');
}

function parseWebhook(webhook: JsonObject | undefined): { url: string; secret: string | null } | null {
  if (webhook === undefined) return null;
  const url = optionalString(webhook, "url", 2048);
  const given = optionalString(webhook, "secret", 1024);
  const secret = given === undefined || given === "" ? null : validateWebhookSecret(given);
  if (url === undefined || url === "") {
    if (secret !== null) throw invalidArgument("webhook.secret needs a webhook.url");
    return null;
  }
  return { url: validateHttpUrl(url, "webhook.url"), secret };
}

function validateWebhookSecret(secret: string): string {
  if (secret.length < MIN_WEBHOOK_SECRET_LENGTH) {
    throw invalidArgument(`webhook.secret must be at least ${MIN_WEBHOOK_SECRET_LENGTH} characters`);
  }
  return secret;
}

const REQUEST_LOG_MODES: readonly RequestLogMode[] = ["errors", "all", "off"];

/** Absent: the default (`errors`); anything but the three modes is refused. */
function parseRequestLogMode(value: unknown): RequestLogMode | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string" && (REQUEST_LOG_MODES as readonly string[]).includes(value)) {
    return value as RequestLogMode;
  }
  throw invalidArgument(`request_log must be one of ${REQUEST_LOG_MODES.join(", ")}`);
}

/** `webhook.retry`: "none" (the default: a failed delivery is not retried) or "backoff". */
function parseRetry(value: unknown, path: string): WebhookRetry {
  if (value === undefined || value === null) return "none";
  if (typeof value !== "string" || !(WEBHOOK_RETRY_MODES as readonly string[]).includes(value)) {
    throw invalidArgument(`${path} must be "none" or "backoff"`);
  }
  return value as WebhookRetry;
}

/** Spec 5.2: configured without a Bearer prefix, since clients add one themselves. */
function validateSharedSecret(secret: string): string {
  if (secret.trim() !== secret || secret === "")
    throw invalidArgument("secret must be non-empty without surrounding whitespace");
  if (/^bearer\s/i.test(secret)) throw invalidArgument("secret must be configured without a Bearer prefix");
  return secret;
}

export function scimClientJson(c: ScimClient, publicUrl: string, extra: JsonObject = {}): JsonObject {
  return {
    client_id: c.clientId,
    organization_id: c.organizationId,
    name: c.name,
    scim_base_url: `${publicUrl}/scim/${encodeURIComponent(c.clientId)}/v2`,
    auto_link: c.autoLink,
    mapping: c.mapping,
    tenant: c.tenant,
    product: c.product,
    webhook:
      c.webhookUrl === null
        ? null
        : { url: c.webhookUrl, secret_set: c.webhookSecretSealed !== null, retry: c.webhookRetry },
    log_webhook_events: c.logWebhookEvents,
    secret_rotate_time: c.secretRotateTime?.toISOString() ?? null,
    previous_secret_expire_time: c.previousSecretExpireTime?.toISOString() ?? null,
    previous_secret_last_used_time: c.previousSecretLastUsedTime?.toISOString() ?? null,
    request_log: c.requestLog,
    extensions: c.extensions as unknown as JsonObject[],
    unknown_extensions: c.unknownExtensions,
    create_time: c.createTime.toISOString(),
    update_time: c.updateTime.toISOString(),
    ...extra,
  };
}
