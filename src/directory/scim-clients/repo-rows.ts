import type { Selectable } from "kysely";
import type { ScimClientsTable } from "../../storage/schema.js";
import { indexedAttributesOf, storedExtensions } from "./extensions.js";
import { AUTH_METHODS, type ScimClient, type StoredScimClientChanges } from "./types.js";

/** A SCIM client's row and its changes, as the repository reads and writes them. */

export function columnsOf(
  changes: StoredScimClientChanges,
  now: Date,
): Partial<Record<keyof ScimClientsTable, unknown>> {
  const set: Partial<Record<keyof ScimClientsTable, unknown>> = { update_time: now };
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.secretHash !== undefined) {
    // Setting a secret outright is the emergency path: no previous secret survives it.
    set.secret_hash = changes.secretHash;
    set.previous_secret_hash = null;
    set.previous_secret_expire_time = null;
    set.previous_secret_last_used_time = null;
    set.secret_rotate_time = now;
  }
  if (changes.autoLink !== undefined) set.auto_link = changes.autoLink;
  if (changes.mapping !== undefined) set.mapping = changes.mapping;
  if (changes.tenant !== undefined) set.tenant = changes.tenant;
  if (changes.product !== undefined) set.product = changes.product;
  if (changes.webhookUrl !== undefined) set.webhook_url = changes.webhookUrl;
  if (changes.webhookSecretSealed !== undefined) set.webhook_secret_sealed = changes.webhookSecretSealed;
  if (changes.logWebhookEvents !== undefined) set.log_webhook_events = changes.logWebhookEvents;
  if (changes.requestLog !== undefined) set.request_log = changes.requestLog;
  if (changes.extensions !== undefined) {
    set.extensions = JSON.stringify(changes.extensions);
    set.extensions_bytes = Buffer.byteLength(set.extensions as string);
  }
  if (changes.unknownExtensions !== undefined) set.unknown_extensions = changes.unknownExtensions;
  if (changes.webhookRetry !== undefined) set.webhook_retry = changes.webhookRetry;
  if (changes.authMethods !== undefined) set.auth_methods = [...changes.authMethods];
  if (changes.spcPagination !== undefined) set.spc_pagination = changes.spcPagination;
  if (changes.groupPatchResponse !== undefined) set.group_patch_response = changes.groupPatchResponse;
  return set;
}

export const toScimClient = (row: Selectable<ScimClientsTable>): ScimClient => {
  const extensions = storedExtensions(row.extensions);
  return {
    clientId: row.client_id,
    organizationId: row.organization_id,
    name: row.name,
    secretHash: row.secret_hash,
    autoLink: row.auto_link,
    mapping: row.mapping,
    tenant: row.tenant,
    product: row.product,
    webhookUrl: row.webhook_url,
    webhookSecretSealed: row.webhook_secret_sealed,
    logWebhookEvents: row.log_webhook_events,
    webhookRetry: row.webhook_retry === "backoff" ? "backoff" : "none",
    groupPatchResponse: row.group_patch_response === "full" ? "full" : "no_content",
    requestLog: row.request_log,
    extensions,
    extensionsBytes: row.extensions_bytes,
    unknownExtensions: row.unknown_extensions,
    indexedAttributes: indexedAttributesOf(extensions),
    createTime: row.create_time,
    updateTime: row.update_time,
    secretRotateTime: row.secret_rotate_time,
    previousSecretHash: row.previous_secret_hash,
    previousSecretExpireTime: row.previous_secret_expire_time,
    previousSecretLastUsedTime: row.previous_secret_last_used_time,
    authMethods: AUTH_METHODS.filter((m) => row.auth_methods.includes(m)),
    spcPagination: row.spc_pagination,
    activatedTime: row.activated_time,
  };
};
