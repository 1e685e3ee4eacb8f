import type { Selectable } from "kysely";
import type { Db } from "../../storage/database.js";
import { isForeignKeyViolation } from "../../storage/errors.js";
import type { SetupLinksTable } from "../../storage/schema.js";
import { OrganizationNotFoundError } from "../organizations/errors.js";
import type { NewSetupLinkRow, SetupIntent, SetupLink } from "./types.js";

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
});
