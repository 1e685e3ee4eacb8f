import type { Selectable } from "kysely";
import type { Clock } from "../../platform/clock.js";
import { sha256Hex } from "../../platform/crypto.js";
import { randomToken, uuidv7 } from "../../platform/ids.js";
import type { Db } from "../../storage/database.js";
import type { AdminTokensTable } from "../../storage/schema.js";

export type AdminRole = "admin" | "viewer";
export const ADMIN_ROLES: readonly AdminRole[] = ["admin", "viewer"];

/** Visible start of every admin token Roster generates (secret scanners recognise it). */
export const ADMIN_TOKEN_PREFIX = "rat_";
/** `last_used_time` is written at most this often per token, so a busy token costs no write per request. */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface AdminToken {
  readonly id: string;
  readonly name: string;
  readonly role: AdminRole;
  readonly expireTime: Date | null;
  readonly revokeTime: Date | null;
  readonly lastUsedTime: Date | null;
  readonly createTime: Date;
}

export type AdminTokenState = "ACTIVE" | "EXPIRED" | "REVOKED";

export const tokenStateOf = (token: AdminToken, now: Date): AdminTokenState => {
  if (token.revokeTime !== null) return "REVOKED";
  if (token.expireTime !== null && token.expireTime.getTime() <= now.getTime()) return "EXPIRED";
  return "ACTIVE";
};

/** Who called the admin API: the bootstrap token (ROSTER_ADMIN_TOKEN or the generated one) or a named token. */
export type AdminPrincipal =
  | { readonly kind: "bootstrap"; readonly role: "admin" }
  | { readonly kind: "token"; readonly role: AdminRole; readonly tokenId: string; readonly name: string };

/**
 * Named admin tokens: 256 random bits each, shown once, kept as a SHA-256 digest (a primary-key probe finds a
 * token; no secret is compared in the application). Nothing is cached, so a revocation holds on every instance
 * from the next request on.
 */
export class AdminTokenService {
  readonly #db: Db;
  readonly #clock: Clock;
  constructor(db: Db, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  async create(name: string, role: AdminRole, expireTime: Date | null): Promise<{ token: AdminToken; secret: string }> {
    const now = this.#clock.now();
    const secret = randomToken(32, ADMIN_TOKEN_PREFIX);
    const row = await this.#db
      .insertInto("admin_tokens")
      .values({
        id: uuidv7(now.getTime()),
        name,
        role,
        digest: digestOf(secret),
        expire_time: expireTime,
        revoke_time: null,
        last_used_time: null,
        create_time: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { token: toAdminToken(row), secret };
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

  /** Revocation is final; revoking again keeps the first revoke_time. */
  async revoke(id: string): Promise<AdminToken | undefined> {
    await this.#db
      .updateTable("admin_tokens")
      .set({ revoke_time: this.#clock.now() })
      .where("id", "=", id)
      .where("revoke_time", "is", null)
      .execute();
    return this.get(id);
  }

  /** The principal of a live named token, or undefined (unknown, revoked or expired by the server clock). */
  async authenticate(presented: string): Promise<AdminPrincipal | undefined> {
    if (!presented.startsWith(ADMIN_TOKEN_PREFIX) || presented.length > 256) return undefined;
    const row = await this.#db
      .selectFrom("admin_tokens")
      .selectAll()
      .where("digest", "=", digestOf(presented))
      .executeTakeFirst();
    if (row === undefined) return undefined;
    const token = toAdminToken(row);
    const now = this.#clock.now();
    if (tokenStateOf(token, now) !== "ACTIVE") return undefined;
    if (token.lastUsedTime === null || now.getTime() - token.lastUsedTime.getTime() >= LAST_USED_RESOLUTION_MS) {
      await this.#db.updateTable("admin_tokens").set({ last_used_time: now }).where("id", "=", token.id).execute();
    }
    return { kind: "token", role: token.role, tokenId: token.id, name: token.name };
  }
}

const digestOf = (token: string): Buffer => Buffer.from(sha256Hex(token), "hex");

const toAdminToken = (row: Selectable<AdminTokensTable>): AdminToken => ({
  id: row.id,
  name: row.name,
  role: row.role,
  expireTime: row.expire_time,
  revokeTime: row.revoke_time,
  lastUsedTime: row.last_used_time,
  createTime: row.create_time,
});
