import type { Selectable } from "kysely";
import type { Db } from "../../storage/database.js";
import type { AdminTokensTable } from "../../storage/schema.js";
import type { AdminToken } from "./types.js";

/** A token as stored: its SHA-256 digest, never the token. */
export interface NewAdminTokenRow {
  readonly id: string;
  readonly name: string;
  readonly role: AdminToken["role"];
  readonly digest: Buffer;
  readonly expireTime: Date | null;
  readonly createTime: Date;
}

/** The storage of named admin tokens (Kysely only). */
export class AdminTokenRepo {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  async insert(token: NewAdminTokenRow): Promise<AdminToken> {
    const row = await this.#db
      .insertInto("admin_tokens")
      .values({
        id: token.id,
        name: token.name,
        role: token.role,
        digest: token.digest,
        expire_time: token.expireTime,
        revoke_time: null,
        last_used_time: null,
        create_time: token.createTime,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toAdminToken(row);
  }

  async get(id: string): Promise<AdminToken | undefined> {
    const row = await this.#db.selectFrom("admin_tokens").selectAll().where("id", "=", id).executeTakeFirst();
    return row === undefined ? undefined : toAdminToken(row);
  }

  /** Keyset page in id order (UUIDv7: creation order). */
  async list(after: string | undefined, limit: number): Promise<AdminToken[]> {
    let q = this.#db.selectFrom("admin_tokens").selectAll().orderBy("id").limit(limit);
    if (after !== undefined) q = q.where("id", ">", after);
    return (await q.execute()).map(toAdminToken);
  }

  /** Sets revoke_time unless the token is revoked already (the first revocation's time stays). */
  async revoke(id: string, now: Date): Promise<void> {
    await this.#db
      .updateTable("admin_tokens")
      .set({ revoke_time: now })
      .where("id", "=", id)
      .where("revoke_time", "is", null)
      .execute();
  }

  async findByDigest(digest: Buffer): Promise<AdminToken | undefined> {
    const row = await this.#db.selectFrom("admin_tokens").selectAll().where("digest", "=", digest).executeTakeFirst();
    return row === undefined ? undefined : toAdminToken(row);
  }

  async noteUse(id: string, now: Date): Promise<void> {
    await this.#db.updateTable("admin_tokens").set({ last_used_time: now }).where("id", "=", id).execute();
  }
}

const toAdminToken = (row: Selectable<AdminTokensTable>): AdminToken => ({
  id: row.id,
  name: row.name,
  role: row.role,
  expireTime: row.expire_time,
  revokeTime: row.revoke_time,
  lastUsedTime: row.last_used_time,
  createTime: row.create_time,
});
