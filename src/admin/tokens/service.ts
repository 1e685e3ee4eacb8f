import type { Clock } from "../../platform/clock.js";
import { sha256Hex } from "../../platform/crypto.js";
import { randomToken, uuidv7 } from "../../platform/ids.js";
import type { AdminTokenRepo } from "./repo.js";
import { type AdminPrincipal, type AdminRole, type AdminToken, tokenStateOf } from "./types.js";

/** Visible start of every admin token Roster generates (secret scanners recognise it). */
export const ADMIN_TOKEN_PREFIX = "rat_";
/** `last_used_time` is written at most this often per token, so a busy token costs no write per request. */
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Named admin tokens: 256 random bits each, shown once, kept as a SHA-256 digest (a primary-key probe finds a
 * token; no secret is compared in the application). Nothing is cached, so a revocation holds on every instance
 * from the next request on.
 */
export class AdminTokenService {
  constructor(
    private readonly repo: AdminTokenRepo,
    private readonly clock: Clock,
  ) {}

  async create(name: string, role: AdminRole, expireTime: Date | null): Promise<{ token: AdminToken; secret: string }> {
    const now = this.clock.now();
    const secret = randomToken(32, ADMIN_TOKEN_PREFIX);
    const token = await this.repo.insert({
      id: uuidv7(now.getTime()),
      name,
      role,
      digest: digestOf(secret),
      expireTime,
      createTime: now,
    });
    return { token, secret };
  }

  get(id: string): Promise<AdminToken | undefined> {
    return this.repo.get(id);
  }

  /** Keyset page in id order (UUIDv7: creation order). */
  list(after: string | undefined, limit: number): Promise<AdminToken[]> {
    return this.repo.list(after, limit);
  }

  /** Revocation is final; revoking again keeps the first revoke_time. */
  async revoke(id: string): Promise<AdminToken | undefined> {
    await this.repo.revoke(id, this.clock.now());
    return this.get(id);
  }

  /** The principal of a live named token, or undefined (unknown, revoked or expired by the server clock). */
  async authenticate(presented: string): Promise<AdminPrincipal | undefined> {
    if (!presented.startsWith(ADMIN_TOKEN_PREFIX) || presented.length > 256) return undefined;
    const token = await this.repo.findByDigest(digestOf(presented));
    if (token === undefined) return undefined;
    const now = this.clock.now();
    if (tokenStateOf(token, now) !== "ACTIVE") return undefined;
    if (token.lastUsedTime === null || now.getTime() - token.lastUsedTime.getTime() >= LAST_USED_RESOLUTION_MS) {
      await this.repo.noteUse(token.id, now);
    }
    return { kind: "token", role: token.role, tokenId: token.id, name: token.name };
  }
}

const digestOf = (token: string): Buffer => Buffer.from(sha256Hex(token), "hex");
