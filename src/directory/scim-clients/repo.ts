import { type Selectable, sql } from "kysely";
import type { Db } from "../../storage/database.js";
import { isForeignKeyViolation, isUniqueViolation } from "../../storage/errors.js";
import type { ScimClientsTable } from "../../storage/schema.js";
import { reindexDeclared } from "../extension-index-repo.js";
import type { ScimClientRefusal } from "./errors.js";
import { indexedAttributesOf, storedExtensions } from "./extensions.js";
import type { NewScimClientRow, ScimClient, StoredScimClientChanges } from "./types.js";

/** A stored webhook secret, as the ROSTER_SECRETS rotation reads it. */
export interface SealedWebhookSecret {
  readonly clientId: string;
  readonly sealed: string;
}

/** The storage of SCIM clients (Kysely only); constraint violations come back as the domain's refusals. */
export class ScimClientRepo {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  async insert(row: NewScimClientRow): Promise<ScimClient | ScimClientRefusal> {
    try {
      const stored = await this.#db
        .insertInto("scim_clients")
        .values({
          client_id: row.clientId,
          organization_id: row.organizationId,
          name: row.name,
          secret_hash: row.secretHash,
          auto_link: row.autoLink,
          mapping: row.mapping,
          tenant: row.tenant,
          product: row.product,
          webhook_url: row.webhookUrl,
          webhook_secret_sealed: row.webhookSecretSealed,
          log_webhook_events: row.logWebhookEvents,
          request_log: row.requestLog,
          extensions: JSON.stringify(row.extensions),
          unknown_extensions: row.unknownExtensions,
          webhook_retry: row.webhookRetry,
          group_patch_response: row.groupPatchResponse,
          create_time: row.now,
          update_time: row.now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toScimClient(stored);
    } catch (e) {
      if (isUniqueViolation(e, "scim_clients_pkey")) return "client_exists";
      if (isForeignKeyViolation(e, "scim_clients_organization_fkey")) return "organization_missing";
      throw e;
    }
  }

  async get(clientId: string): Promise<ScimClient | undefined> {
    const row = await this.#db
      .selectFrom("scim_clients")
      .selectAll()
      .where("client_id", "=", clientId)
      .executeTakeFirst();
    return row === undefined ? undefined : toScimClient(row);
  }

  async list(organizationId: string | undefined, after: string | undefined, limit: number): Promise<ScimClient[]> {
    let q = this.#db.selectFrom("scim_clients").selectAll().orderBy("client_id").limit(limit);
    if (organizationId !== undefined) q = q.where("organization_id", "=", organizationId);
    if (after !== undefined) q = q.where("client_id", ">", after);
    return (await q.execute()).map(toScimClient);
  }

  /**
   * Applies the changes in one transaction. A change of the declared extensions also indexes the values of users
   * written before an attribute became filterable or unique (docs/scim-extensions.md).
   */
  async update(clientId: string, changes: StoredScimClientChanges, now: Date): Promise<ScimClient | undefined> {
    const set = columnsOf(changes, now);
    const row = await this.#db.transaction().execute(async (trx) => {
      const before =
        changes.extensions === undefined
          ? undefined
          : await trx
              .selectFrom("scim_clients")
              .select("extensions")
              .where("client_id", "=", clientId)
              .forUpdate()
              .executeTakeFirst();
      const updated = await trx
        .updateTable("scim_clients")
        .set(set as never)
        .where("client_id", "=", clientId)
        .returningAll()
        .executeTakeFirst();
      if (updated !== undefined && before !== undefined && changes.extensions !== undefined) {
        // Users and groups written before an attribute became filterable or unique are indexed now.
        await reindexDeclared(trx, updated.organization_id, storedExtensions(before.extensions), changes.extensions);
      }
      return updated;
    });
    return row === undefined ? undefined : toScimClient(row);
  }

  /** The current secret becomes the previous one until `graceUntil` (none: it stops at once). */
  async replaceSecret(
    clientId: string,
    secretHash: string,
    now: Date,
    graceUntil: Date | null,
  ): Promise<ScimClient | undefined> {
    const row = await this.#db
      .updateTable("scim_clients")
      .set((eb) => ({
        previous_secret_hash: graceUntil === null ? null : eb.ref("secret_hash"),
        previous_secret_expire_time: graceUntil,
        previous_secret_last_used_time: null,
        secret_hash: secretHash,
        secret_rotate_time: now,
        update_time: now,
      }))
      .where("client_id", "=", clientId)
      .returningAll()
      .executeTakeFirst();
    return row === undefined ? undefined : toScimClient(row);
  }

  /** Written only while the previous secret is still the one that authenticated. */
  async notePreviousSecretUse(clientId: string, previousSecretHash: string | null, now: Date): Promise<void> {
    await this.#db
      .updateTable("scim_clients")
      .set({ previous_secret_last_used_time: now })
      .where("client_id", "=", clientId)
      .where("previous_secret_hash", "=", previousSecretHash)
      .execute();
  }

  async delete(clientId: string): Promise<boolean> {
    const r = await this.#db.deleteFrom("scim_clients").where("client_id", "=", clientId).executeTakeFirst();
    return r.numDeletedRows > 0n;
  }

  /** Webhook secrets not sealed with `currentPrefix`, in client_id order after `after`. */
  async sealedOtherwise(currentPrefix: string, after: string, limit: number): Promise<SealedWebhookSecret[]> {
    const rows = await this.#db
      .selectFrom("scim_clients")
      .select(["client_id", "webhook_secret_sealed"])
      .where("client_id", ">", after)
      .where("webhook_secret_sealed", "is not", null)
      .where(sql<boolean>`webhook_secret_sealed not like ${`${currentPrefix}%`}`)
      .orderBy("client_id")
      .limit(limit)
      .execute();
    return rows.flatMap((r) =>
      r.webhook_secret_sealed === null ? [] : [{ clientId: r.client_id, sealed: r.webhook_secret_sealed }],
    );
  }

  /** Replaces a sealed webhook secret only if it still holds `was`: a concurrent change is never overwritten. */
  async reseal(clientId: string, was: string, sealed: string): Promise<boolean> {
    const r = await this.#db
      .updateTable("scim_clients")
      .set({ webhook_secret_sealed: sealed })
      .where("client_id", "=", clientId)
      .where("webhook_secret_sealed", "=", was)
      .executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }
}

function columnsOf(changes: StoredScimClientChanges, now: Date): Partial<Record<keyof ScimClientsTable, unknown>> {
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
  if (changes.extensions !== undefined) set.extensions = JSON.stringify(changes.extensions);
  if (changes.unknownExtensions !== undefined) set.unknown_extensions = changes.unknownExtensions;
  if (changes.webhookRetry !== undefined) set.webhook_retry = changes.webhookRetry;
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
    unknownExtensions: row.unknown_extensions,
    indexedAttributes: indexedAttributesOf(extensions),
    createTime: row.create_time,
    updateTime: row.update_time,
    secretRotateTime: row.secret_rotate_time,
    previousSecretHash: row.previous_secret_hash,
    previousSecretExpireTime: row.previous_secret_expire_time,
    previousSecretLastUsedTime: row.previous_secret_last_used_time,
  };
};
