import type { Static } from "@sinclair/typebox";
import type { ExtensionDeclaration, UnknownExtensions } from "../../directory/scim-clients/extensions.js";
import {
  AUTH_METHODS,
  type AuthMethod,
  DEFAULT_AUTH_METHODS,
  type ScimClient,
  type WebhookRetry,
} from "../../directory/scim-clients/types.js";
import {
  type DeclarationInput,
  ExtensionDeclarationError,
  parseExtensions,
} from "../../scim/schema/extension-declarations.js";
import { invalidArgument } from "../errors.js";
import type { JsonObject } from "../json.js";
import type { CreateScimClientBody } from "../schemas/scim-clients.js";

/** What a schema cannot say about SCIM client fields: URLs, secrets, extension declarations. */

/** Webhook secrets sign every delivery: shorter ones are guessable offline from a single signed request. */
export const MIN_WEBHOOK_SECRET_LENGTH = 16;

type WebhookInput = NonNullable<Static<typeof CreateScimClientBody>["webhook"]>;

/**
 * The declaration the route's schema checked, with the rules that span fields applied (docs/scim-extensions.md); a
 * refused one is the protocol's own refusal (RFC 7643's grammar lives in the SCIM registry): 400 invalidArgument.
 */
export function extensionsOf(value: readonly DeclarationInput[] | null | undefined): ExtensionDeclaration[] {
  try {
    return parseExtensions(value);
  } catch (e) {
    if (e instanceof ExtensionDeclarationError) throw invalidArgument(e.message);
    throw e;
  }
}

/** docs/scim-extensions.md: "reject" (the default) answers 400 to an undeclared schema URN; "store" keeps it. */
export const unknownExtensionsOf = (value: UnknownExtensions | null | undefined): UnknownExtensions =>
  value ?? "reject";

/** `webhook.retry`: "none" (the default: a failed delivery is not retried) or "backoff". */
export const retryOf = (value: WebhookRetry | null | undefined): WebhookRetry => value ?? "none";

export function parseWebhook(webhook: WebhookInput | null | undefined): { url: string; secret: string | null } | null {
  if (webhook === undefined || webhook === null) return null;
  const { url, secret: given } = webhook;
  const secret = given === undefined || given === null || given === "" ? null : validateWebhookSecret(given);
  if (url === undefined || url === null || url === "") {
    if (secret !== null) throw invalidArgument("webhook.secret needs a webhook.url");
    return null;
  }
  return { url: validateHttpUrl(url, "webhook.url"), secret };
}

/** Refuses (400) a webhook URL the outbound guard would never post to: checked when stored and again when sent. */
export async function allowedWebhookUrl(
  checkWebhookUrl: (url: string) => Promise<string | undefined>,
  url: string,
): Promise<void> {
  const problem = await checkWebhookUrl(url);
  if (problem !== undefined) throw invalidArgument(`webhook.url is refused: ${problem}`);
}

export function validateWebhookSecret(secret: string): string {
  if (secret.length < MIN_WEBHOOK_SECRET_LENGTH) {
    throw invalidArgument(`webhook.secret must be at least ${MIN_WEBHOOK_SECRET_LENGTH} characters`);
  }
  return secret;
}

/** A SCIM client secret is configured without a Bearer prefix, since clients add one themselves. */
export function validateSharedSecret(secret: string): string {
  if (secret.trim() !== secret || secret === "")
    throw invalidArgument("secret must be non-empty without surrounding whitespace");
  if (/^bearer\s/i.test(secret)) throw invalidArgument("secret must be configured without a Bearer prefix");
  return secret;
}

/** Only http(s) URLs with a host; the webhook sender refuses anything else too. */
export function validateHttpUrl(raw: string, field: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidArgument(`${field} must be an absolute http:// or https:// URL`);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") {
    throw invalidArgument(`${field} must be an absolute http:// or https:// URL`);
  }
  if (url.username !== "" || url.password !== "") throw invalidArgument(`${field} must not carry credentials`);
  return url.toString();
}

/** `authentication_methods`: the given list in the canonical order, or the default (bearer, client_credentials). */
export const authMethodsOf = (value: readonly AuthMethod[] | null | undefined): readonly AuthMethod[] =>
  value === undefined || value === null ? DEFAULT_AUTH_METHODS : AUTH_METHODS.filter((m) => value.includes(m));

export function scimClientJson(c: ScimClient, publicUrl: string, extra: JsonObject = {}): JsonObject {
  const scimBaseUrl = `${publicUrl}/scim/${encodeURIComponent(c.clientId)}/v2`;
  return {
    client_id: c.clientId,
    organization_id: c.organizationId,
    name: c.name,
    scim_base_url: scimBaseUrl,
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
    activated_time: c.activatedTime?.toISOString() ?? null,
    request_log: c.requestLog,
    group_patch_response: c.groupPatchResponse,
    extensions: c.extensions as unknown as JsonObject[],
    unknown_extensions: c.unknownExtensions,
    authentication_methods: [...c.authMethods],
    basic_username: c.clientId,
    oauth_token_url: `${scimBaseUrl}/oauth/token`,
    service_provider_config_pagination: c.spcPagination,
    create_time: c.createTime.toISOString(),
    update_time: c.updateTime.toISOString(),
    ...extra,
  };
}
