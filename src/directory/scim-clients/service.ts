import type { Selectable } from "kysely";
import type { Db } from "../../storage/database.js";
import type { ScimClientsTable } from "../../storage/schema.js";
import { isForeignKeyViolation, isUniqueViolation } from "../../storage/errors.js";
import { hashSecret, type SecretBox } from "../../platform/crypto.js";
import type { Clock } from "../../platform/clock.js";
import { ScimClientCache } from "./cache.js";

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
  /** Whether a failed webhook delivery is retried (docs/webhooks.md "Retries"). */
  readonly webhookRetry: WebhookRetry;
  readonly createTime: Date;
  readonly updateTime: Date;
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
    if (changes.secret !== undefined) set.secret_hash = hashSecret(changes.secret);
    if (changes.autoLink !== undefined) set.auto_link = changes.autoLink;
    if (changes.mapping !== undefined) set.mapping = changes.mapping;
    if (changes.tenant !== undefined) set.tenant = changes.tenant;
    if (changes.product !== undefined) set.product = changes.product;
    if (changes.webhookUrl !== undefined) set.webhook_url = changes.webhookUrl;
    if (changes.webhookSecret !== undefined) {
      set.webhook_secret_sealed = changes.webhookSecret === null ? null : this.#box.seal(changes.webhookSecret);
    }
    if (changes.logWebhookEvents !== undefined) set.log_webhook_events = changes.logWebhookEvents;
    if (changes.webhookRetry !== undefined) set.webhook_retry = changes.webhookRetry;
    this.#cache.forget(clientId);
    const row = await this.#db
      .updateTable("scim_clients")
      .set(set as never)
      .where("client_id", "=", clientId)
      .returningAll()
      .executeTakeFirst();
    // Forget again: a request may have re-read the old row while this update was in flight.
    this.#cache.forget(clientId);
    return row === undefined ? undefined : toScimClient(row);
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

export const toScimClient = (row: Selectable<ScimClientsTable>): ScimClient => ({
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
  createTime: row.create_time,
  updateTime: row.update_time,
});
