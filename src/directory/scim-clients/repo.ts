import { sql } from "kysely";
import type { Db } from "../../storage/database.js";
import { isForeignKeyViolation, isUniqueViolation } from "../../storage/errors.js";
import type { OutboxBatch } from "../events.js";
import { writeEvents } from "../events-repo.js";
import { reindexDeclared } from "../extension-index-repo.js";
import { OrganizationNotFoundError } from "../organizations/errors.js";
import { linkDelivery } from "../setup-links/delivery-repo.js";
import { ClientIdTakenError, ExtensionValuesCollideError } from "./errors.js";
import { storedExtensions } from "./extensions.js";
import { columnsOf, toScimClient } from "./repo-rows.js";
import type { NewScimClientRow, ScimClient, StoredScimClientChanges } from "./types.js";

export { toScimClient } from "./repo-rows.js";

/** What a client's JSON holds besides its declaration and mapping, counted toward a list page's bytes. */
const CLIENT_ROW_BYTES = 1024;

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

  /**
   * Inserts the client and, in the same transaction, indexes the values users and groups of the organization
   * already hold for its filterable and unique attributes (docs/scim-extensions.md) and writes the events `eventsOf`
   * makes of it. A client created through a setup link starts with the webhook `linkDelivery` reads.
   */
  async insert(
    row: NewScimClientRow,
    eventsOf: (client: ScimClient) => OutboxBatch,
  ): Promise<{ client: ScimClient; batch: OutboxBatch }> {
    const extensions = JSON.stringify(row.extensions);
    try {
      return await this.#db.transaction().execute(async (trx) => {
        const delivery =
          row.setupLinkId === undefined ? {} : await linkDelivery(trx, row.organizationId, row.setupLinkId);
        const inserted = await trx
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
            extensions,
            extensions_bytes: Buffer.byteLength(extensions),
            unknown_extensions: row.unknownExtensions,
            webhook_retry: row.webhookRetry,
            auth_methods: [...row.authMethods],
            spc_pagination: row.spcPagination,
            group_patch_response: row.groupPatchResponse,
            create_time: row.now,
            update_time: row.now,
            ...delivery,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await reindexDeclared(trx, row.organizationId, row.clientId, [], row.extensions);
        const client = toScimClient(inserted);
        return { client, batch: await recordEvents(trx, client, eventsOf) };
      });
    } catch (e) {
      if (isUniqueViolation(e, "scim_clients_pkey")) throw new ClientIdTakenError(row.clientId);
      if (isForeignKeyViolation(e, "scim_clients_organization_fkey")) {
        throw new OrganizationNotFoundError(row.organizationId);
      }
      throw raced(e);
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

  /**
   * One page in client_id order: at most `limit` clients and, past the first, no more than `maxBytes` of their
   * declarations and mappings (docs/scim-extensions.md "Limits"), summed in SQL from stored sizes so the rows past
   * the budget are never read. `more`: whether clients follow the page.
   */
  async list(
    organizationId: string | undefined,
    after: string | undefined,
    limit: number,
    maxBytes: number,
  ): Promise<{ clients: ScimClient[]; more: boolean }> {
    const size = sql<number>`extensions_bytes + coalesce(octet_length(mapping), 0) + ${CLIENT_ROW_BYTES}`;
    let inner = this.#db
      .selectFrom("scim_clients")
      .selectAll()
      .select(sql<string>`sum(${size}) over (order by client_id)`.as("running"))
      .select(size.as("own"))
      .orderBy("client_id")
      .limit(limit + 1);
    if (organizationId !== undefined) inner = inner.where("organization_id", "=", organizationId);
    if (after !== undefined) inner = inner.where("client_id", ">", after);
    // The client that crosses the budget is read too: it tells that more follow.
    const rows = await this.#db
      .selectFrom(inner.as("p"))
      .selectAll()
      .where(sql<boolean>`p.running - p.own < ${maxBytes}`)
      .orderBy("client_id")
      .execute();
    const page: ScimClient[] = [];
    for (const row of rows) {
      if (page.length === limit || (page.length > 0 && Number(row.running) > maxBytes)) break;
      page.push(toScimClient(row));
    }
    return { clients: page, more: rows.length > page.length };
  }

  /**
   * Applies the changes in one transaction. A change of the declared extensions also indexes the values of users
   * written before an attribute became filterable or unique (docs/scim-extensions.md).
   */
  async update(clientId: string, changes: StoredScimClientChanges, now: Date): Promise<ScimClient | undefined> {
    const set = columnsOf(changes, now);
    const row = await this.#db
      .transaction()
      .execute(async (trx) => {
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
          await reindexDeclared(
            trx,
            updated.organization_id,
            clientId,
            storedExtensions(before.extensions),
            changes.extensions,
          );
        }
        return updated;
      })
      .catch((e: unknown) => {
        throw raced(e);
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

  /**
   * Deletes the client and writes the events `eventsOf` makes of it, in one transaction: the events first, while the
   * client they name still exists (every event is written so, 0025-event-sources), then the client under its lock.
   */
  async delete(clientId: string, eventsOf: (client: ScimClient) => OutboxBatch): Promise<OutboxBatch | undefined> {
    return this.#db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom("scim_clients")
        .selectAll()
        .where("client_id", "=", clientId)
        .forUpdate()
        .executeTakeFirst();
      if (row === undefined) return undefined;
      const batch = await recordEvents(trx, toScimClient(row), eventsOf);
      await trx.deleteFrom("scim_clients").where("client_id", "=", clientId).execute();
      return batch;
    });
  }

  /**
   * Marks the client active at its first successful SCIM request and writes the events `eventsOf` makes of it, in one
   * transaction; undefined when it was already active (another request, another instance, came first).
   */
  async activate(clientId: string, now: Date, eventsOf: (client: ScimClient) => OutboxBatch) {
    return this.#db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable("scim_clients")
        .set({ activated_time: now })
        .where("client_id", "=", clientId)
        .where("activated_time", "is", null)
        .returningAll()
        .executeTakeFirst();
      return row === undefined ? undefined : recordEvents(trx, toScimClient(row), eventsOf);
    });
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

/**
 * A unique value a user (or group) wrote while the declaration was being indexed, repeating one the index was
 * rebuilding: the same refusal as a collision found by the rebuild, without the holders' names.
 */
function raced(e: unknown): unknown {
  const unique = ["identity_extension_values_unique_key", "group_extension_values_unique_key"];
  const hit = unique.findIndex((key) => isUniqueViolation(e, key));
  if (hit < 0) return e;
  return new ExtensionValuesCollideError(hit === 0 ? "User" : "Group", []);
}

/** Writes, in the change's transaction, the events `eventsOf` makes of the client as it now stands. */
async function recordEvents(
  trx: Parameters<typeof writeEvents>[0],
  client: ScimClient,
  eventsOf: (client: ScimClient) => OutboxBatch,
): Promise<OutboxBatch> {
  const batch = eventsOf(client);
  await writeEvents(trx, batch);
  return batch;
}
