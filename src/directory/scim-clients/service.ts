import type { Selectable } from "kysely";
import type { Db } from "../../storage/database.js";
import type { RequestLogMode, ScimClientsTable } from "../../storage/schema.js";
import { isForeignKeyViolation, isUniqueViolation } from "../../storage/errors.js";
import { hashSecret, type SecretBox, verifySecret } from "../../platform/crypto.js";
import type { Clock } from "../../platform/clock.js";
import { reindexDeclared } from "../extension-index-repo.js";
import { ScimClientCache } from "./cache.js";
import {
  type ExtensionDeclaration,
  type IndexedAttribute,
  indexedAttributesOf,
  storedExtensions,
  type UnknownExtensions,
} from "./extensions.js";

/** The longest grace period of a secret rotation: an IdP's secret can be updated within a week. */
export const MAX_SECRET_GRACE_SECONDS = 7 * 86_400;
/** The previous secret's last use is written at most this often per client and instance. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** A SCIM client = a directory sync connection (DESIGN.md "Domain"). */
export interface ScimClient {
  readonly clientId: string;
  readonly organizationId: string;
  readonly name: string;
  readonly secretHash: string;
  readonly autoLink: boolean;
  readonly mapping: string | null;
  readonly tenant: string;
  readonly product: string;
  readonly webhookUrl: string | null;
  /** Sealed with ROSTER_SECRETS; open it only to sign a delivery. */
  readonly webhookSecretSealed: string | null;
  readonly logWebhookEvents: boolean;
  /** Which of its SCIM requests the request log keeps (docs/operations.md). */
  readonly requestLog: RequestLogMode;
  /** Declared custom schema extensions (docs/scim-extensions.md). */
  readonly extensions: readonly ExtensionDeclaration[];
  readonly unknownExtensions: UnknownExtensions;
  /** The extension attributes whose values are indexed for eq filters and uniqueness; empty for most clients. */
  readonly indexedAttributes: readonly IndexedAttribute[];
  /** Whether a failed webhook delivery is retried (docs/webhooks.md "Retries"). */
  readonly webhookRetry: WebhookRetry;
  readonly createTime: Date;
  readonly updateTime: Date;
  /** When the secret last changed (`:rotateSecret`, or a PATCH of `secret`); null if never since creation. */
  readonly secretRotateTime: Date | null;
  /** The replaced secret's hash, accepted until `previousSecretExpireTime` (a rotation's grace period). */
  readonly previousSecretHash: string | null;
  readonly previousSecretExpireTime: Date | null;
  /** The last time the previous secret authenticated a request (recorded at most once a minute per instance). */
  readonly previousSecretLastUsedTime: Date | null;
}

export const WEBHOOK_RETRY_MODES = ["none", "backoff"] as const;
export type WebhookRetry = (typeof WEBHOOK_RETRY_MODES)[number];

export interface ScimClientInput {
  readonly organizationId: string;
  readonly clientId: string;
  readonly secret: string;
  readonly name: string;
  readonly autoLink: boolean;
  readonly mapping: string | null;
  readonly tenant: string;
  readonly product: string;
  readonly webhook: { readonly url: string; readonly secret: string | null } | null;
  readonly logWebhookEvents: boolean;
  readonly requestLog?: RequestLogMode;
  readonly extensions?: readonly ExtensionDeclaration[];
  readonly unknownExtensions?: UnknownExtensions;
  readonly webhookRetry?: WebhookRetry;
}

/** Changes to apply; `undefined` leaves a field as it is, `null` clears it. */
export interface ScimClientChanges {
  name?: string;
  secret?: string;
  autoLink?: boolean;
  mapping?: string | null;
  tenant?: string;
  product?: string;
  webhookUrl?: string | null;
  webhookSecret?: string | null;
  logWebhookEvents?: boolean;
  requestLog?: RequestLogMode;
  extensions?: readonly ExtensionDeclaration[];
  unknownExtensions?: UnknownExtensions;
  webhookRetry?: WebhookRetry;
}

export type CreateResult =
  | { readonly ok: true; readonly client: ScimClient }
  | { readonly ok: false; readonly reason: "client_exists" | "organization_missing" };

export class ScimClientService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #box: SecretBox;
  readonly #cache: ScimClientCache;
  /** Per client: when this instance last wrote previous_secret_last_used_time (bounds writes on the hot path). */
  readonly #previousUseWritten = new Map<string, number>();
  constructor(db: Db, clock: Clock, box: SecretBox) {
    this.#db = db;
    this.#clock = clock;
    this.#box = box;
    this.#cache = new ScimClientCache((id) => this.get(id), clock);
  }

  /** The read-through lookup of the SCIM hot path (a few seconds of staleness across instances). */
  get cached(): ScimClientCache {
    return this.#cache;
  }

  /** What SCIM authentication needs: the cached and the fresh client, the secret check, the use record. */
  get authenticator() {
    return {
      get: (clientId: string) => this.#cache.get(clientId),
      refresh: (clientId: string) => this.#cache.refresh(clientId),
      match: (client: ScimClient, presented: string) => matchSecret(client, presented, this.#clock.now()),
      notePreviousSecretUse: (client: ScimClient) => this.notePreviousSecretUse(client),
    };
  }

  async create(input: ScimClientInput): Promise<CreateResult> {
    const now = this.#clock.now();
    try {
      const row = await this.#db
        .insertInto("scim_clients")
        .values({
          client_id: input.clientId,
          organization_id: input.organizationId,
          name: input.name,
          secret_hash: hashSecret(input.secret),
          auto_link: input.autoLink,
          mapping: input.mapping,
          tenant: input.tenant,
          product: input.product,
          webhook_url: input.webhook?.url ?? null,
          webhook_secret_sealed:
            input.webhook?.secret === null || input.webhook === null ? null : this.#box.seal(input.webhook.secret),
          log_webhook_events: input.logWebhookEvents,
          request_log: input.requestLog ?? "errors",
          extensions: JSON.stringify(input.extensions ?? []),
          unknown_extensions: input.unknownExtensions ?? "reject",
          webhook_retry: input.webhookRetry ?? "none",
          create_time: now,
          update_time: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return { ok: true, client: toScimClient(row) };
    } catch (e) {
      if (isUniqueViolation(e, "scim_clients_pkey")) return { ok: false, reason: "client_exists" };
      if (isForeignKeyViolation(e, "scim_clients_organization_fkey"))
        return { ok: false, reason: "organization_missing" };
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

  async update(clientId: string, changes: ScimClientChanges): Promise<ScimClient | undefined> {
    const set: Partial<Record<keyof ScimClientsTable, unknown>> = { update_time: this.#clock.now() };
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.secret !== undefined) {
      // Setting a secret outright is the emergency path: no previous secret survives it.
      set.secret_hash = hashSecret(changes.secret);
      set.previous_secret_hash = null;
      set.previous_secret_expire_time = null;
      set.previous_secret_last_used_time = null;
      set.secret_rotate_time = this.#clock.now();
    }
    if (changes.autoLink !== undefined) set.auto_link = changes.autoLink;
    if (changes.mapping !== undefined) set.mapping = changes.mapping;
    if (changes.tenant !== undefined) set.tenant = changes.tenant;
    if (changes.product !== undefined) set.product = changes.product;
    if (changes.webhookUrl !== undefined) set.webhook_url = changes.webhookUrl;
    if (changes.webhookSecret !== undefined) {
      set.webhook_secret_sealed = changes.webhookSecret === null ? null : this.#box.seal(changes.webhookSecret);
    }
    if (changes.logWebhookEvents !== undefined) set.log_webhook_events = changes.logWebhookEvents;
    if (changes.requestLog !== undefined) set.request_log = changes.requestLog;
    if (changes.extensions !== undefined) set.extensions = JSON.stringify(changes.extensions);
    if (changes.unknownExtensions !== undefined) set.unknown_extensions = changes.unknownExtensions;
    if (changes.webhookRetry !== undefined) set.webhook_retry = changes.webhookRetry;
    this.#cache.forget(clientId);
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
    // Forget again: a request may have re-read the old row while this update was in flight.
    this.#cache.forget(clientId);
    return row === undefined ? undefined : toScimClient(row);
  }

  /**
   * Replaces the secret. With a grace period the replaced one keeps authenticating until `now + graceSeconds`;
   * an older previous secret (from an earlier rotation) stops at once: at most two secrets are ever live.
   */
  async rotateSecret(clientId: string, newSecret: string, graceSeconds: number): Promise<ScimClient | undefined> {
    const now = this.#clock.now();
    const graceUntil = graceSeconds > 0 ? new Date(now.getTime() + graceSeconds * 1000) : null;
    this.#cache.forget(clientId);
    const row = await this.#db
      .updateTable("scim_clients")
      .set((eb) => ({
        previous_secret_hash: graceUntil === null ? null : eb.ref("secret_hash"),
        previous_secret_expire_time: graceUntil,
        previous_secret_last_used_time: null,
        secret_hash: hashSecret(newSecret),
        secret_rotate_time: now,
        update_time: now,
      }))
      .where("client_id", "=", clientId)
      .returningAll()
      .executeTakeFirst();
    this.#cache.forget(clientId);
    this.#previousUseWritten.delete(clientId);
    return row === undefined ? undefined : toScimClient(row);
  }

  /** Records that the previous secret authenticated a request, so an operator sees when the IdP switched. */
  async notePreviousSecretUse(client: ScimClient): Promise<void> {
    const now = this.#clock.now();
    const written = this.#previousUseWritten.get(client.clientId);
    if (written !== undefined && now.getTime() - written < LAST_USED_RESOLUTION_MS) return;
    if (this.#previousUseWritten.size >= 10_000) this.#previousUseWritten.clear();
    this.#previousUseWritten.set(client.clientId, now.getTime());
    await this.#db
      .updateTable("scim_clients")
      .set({ previous_secret_last_used_time: now })
      .where("client_id", "=", client.clientId)
      .where("previous_secret_hash", "=", client.previousSecretHash)
      .execute();
  }

  async delete(clientId: string): Promise<boolean> {
    this.#cache.forget(clientId);
    const r = await this.#db.deleteFrom("scim_clients").where("client_id", "=", clientId).executeTakeFirst();
    this.#cache.forget(clientId);
    return r.numDeletedRows > 0n;
  }

  /** The plaintext webhook secret, for signing only; never for a response or a log line. */
  openWebhookSecret(client: ScimClient): string | undefined {
    return client.webhookSecretSealed === null ? undefined : this.#box.open(client.webhookSecretSealed);
  }
}

/**
 * Which of the client's secrets `presented` is: the current one, or the previous one while its grace period
 * lasts. Both are compared in constant time, and both are always computed, so timing tells nothing about which.
 */
export function matchSecret(client: ScimClient, presented: string, now: Date): "current" | "previous" | undefined {
  const current = verifySecret(presented, client.secretHash);
  const previousLive =
    client.previousSecretHash !== null &&
    client.previousSecretExpireTime !== null &&
    client.previousSecretExpireTime.getTime() > now.getTime();
  const previous = client.previousSecretHash !== null && verifySecret(presented, client.previousSecretHash);
  if (current) return "current";
  return previous && previousLive ? "previous" : undefined;
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
