import { type Selectable, sql } from "kysely";
import type { Db } from "../../storage/database.js";
import { isForeignKeyViolation } from "../../storage/errors.js";
import type { SetupLinksTable } from "../../storage/schema.js";
import { OrganizationNotFoundError } from "../organizations/errors.js";
import type { NewSetupLinkRow, SetupIntent, SetupLink } from "./types.js";

/** A link's sealed webhook secret, as the ROSTER_SECRETS rotation reads it. */
export interface SealedLinkSecret {
  readonly id: string;
  readonly sealed: string;
}

/** The storage of setup links (Kysely only). */
export class SetupLinkRepo {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  /** The stored link; a missing organization is refused (OrganizationNotFoundError). */
  async insert(row: NewSetupLinkRow): Promise<SetupLink> {
    try {
      const stored = await this.#db
        .insertInto("setup_links")
        .values({
          id: row.id,
          organization_id: row.organizationId,
          token_digest: row.tokenDigest,
          intent: row.intent,
          return_url: row.returnUrl,
          create_time: row.createTime,
          expire_time: row.expireTime,
          webhook_url: row.webhook?.url ?? null,
          webhook_secret_sealed: row.webhook?.secretSealed ?? null,
          webhook_retry: row.webhook?.retry ?? "none",
          tenant: row.tenant,
          product: row.product,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toSetupLink(stored);
    } catch (e) {
      if (isForeignKeyViolation(e, "setup_links_organization_fkey"))
        throw new OrganizationNotFoundError(row.organizationId);
      throw e;
    }
  }

  async get(id: string): Promise<SetupLink | undefined> {
    const row = await this.#db.selectFrom("setup_links").selectAll().where("id", "=", id).executeTakeFirst();
    return row === undefined ? undefined : toSetupLink(row);
  }

  /** The link a token names, recording its first opening. */
  open(tokenDigest: string, now: Date): Promise<SetupLink | undefined> {
    return this.#stampOnce("first_open_time", "token_digest", tokenDigest, now);
  }

  /** Keyset page in id order (UUIDv7: creation order), on (organization_id, id). */
  async list(organizationId: string | undefined, after: string | undefined, limit: number): Promise<SetupLink[]> {
    let q = this.#db.selectFrom("setup_links").selectAll().orderBy("id").limit(limit);
    if (organizationId !== undefined) q = q.where("organization_id", "=", organizationId);
    if (after !== undefined) q = q.where("id", ">", after);
    return (await q.execute()).map(toSetupLink);
  }

  /** Revocation is final; revoking again keeps the first revoke_time. */
  revoke(id: string, now: Date): Promise<SetupLink | undefined> {
    return this.#stampOnce("revoke_time", "id", id, now);
  }

  /** ROSTER_SECRETS rotation: up to `limit` webhook secrets not sealed with `currentPrefix`, in id order after `after`. */
  async sealedOtherwise(currentPrefix: string, after: string | undefined, limit: number): Promise<SealedLinkSecret[]> {
    let q = this.#db
      .selectFrom("setup_links")
      .select(["id", "webhook_secret_sealed"])
      .where("webhook_secret_sealed", "is not", null)
      .where(sql<boolean>`webhook_secret_sealed not like ${`${currentPrefix}%`}`)
      .orderBy("id")
      .limit(limit);
    if (after !== undefined) q = q.where("id", ">", after);
    const rows = await q.execute();
    return rows.flatMap((r) =>
      r.webhook_secret_sealed === null ? [] : [{ id: r.id, sealed: r.webhook_secret_sealed }],
    );
  }

  /** Replaces a link's sealed webhook secret only if it still holds `was`. */
  async reseal(id: string, was: string, sealed: string): Promise<boolean> {
    const r = await this.#db
      .updateTable("setup_links")
      .set({ webhook_secret_sealed: sealed })
      .where("id", "=", id)
      .where("webhook_secret_sealed", "=", was)
      .executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }

  /** Sets `stamp` to `now` on the link whose `key` is `value`, unless it is set already; the link as it is then. */
  async #stampOnce(
    stamp: "first_open_time" | "revoke_time",
    key: "id" | "token_digest",
    value: string,
    now: Date,
  ): Promise<SetupLink | undefined> {
    const row = await this.#db
      .updateTable("setup_links")
      .set((eb) => ({ [stamp]: eb.fn.coalesce(stamp, eb.val(now)) }))
      .where(key, "=", value)
      .returningAll()
      .executeTakeFirst();
    return row === undefined ? undefined : toSetupLink(row);
  }
}

const toSetupLink = (row: Selectable<SetupLinksTable>): SetupLink => ({
  id: row.id,
  organizationId: row.organization_id,
  intent: row.intent as SetupIntent,
  returnUrl: row.return_url,
  createTime: row.create_time,
  expireTime: row.expire_time,
  revokeTime: row.revoke_time,
  firstOpenTime: row.first_open_time,
  webhook:
    row.webhook_url === null
      ? null
      : { url: row.webhook_url, retry: row.webhook_retry === "backoff" ? "backoff" : "none" },
  tenant: row.tenant,
  product: row.product,
});
