import { createHash, createHmac } from "node:crypto";
import { jwtVerify, SignJWT } from "jose";
import type { ScimClient } from "../../directory/scim-clients/types.js";
import type { Clock } from "../../platform/clock.js";
import { ACCESS_TOKEN_TTL_SECONDS } from "../limits.js";

const AUDIENCE = "roster-scim";
const ALGORITHM = "HS256";

export type SecretUsed = "current" | "previous";

/**
 * OAuth 2.0 access tokens for the client-credentials grant (RFC 6749 §4.4): JWTs signed with a key derived from the
 * first of ROSTER_SECRETS and verified with any of them, so every instance verifies a token without reading the
 * database. A token names its client (`sub`) and a digest of the secret it was issued for (`sv`): it stops working
 * when that secret does (a rotation's grace period ends, or the secret is replaced outright), and on any other
 * connection.
 */
export class AccessTokenCodec {
  readonly #keys: readonly { readonly kid: string; readonly key: Uint8Array }[];
  readonly #clock: Clock;

  constructor(secrets: readonly Buffer[], clock: Clock) {
    if (secrets.length === 0) throw new Error("AccessTokenCodec needs at least one secret");
    this.#keys = secrets.map((s) => {
      // Derived keys keep token MACs apart from every other use of the same secrets.
      const key = createHmac("sha256", s).update("roster-scim-access-token-v1").digest();
      return { kid: createHash("sha256").update(key).digest("base64url").slice(0, 12), key };
    });
    this.#clock = clock;
  }

  async issue(client: ScimClient, secret: SecretUsed): Promise<{ token: string; expiresIn: number }> {
    const signing = this.#keys[0];
    if (signing === undefined) throw new Error("no signing key");
    const secretHash = secret === "current" ? client.secretHash : client.previousSecretHash;
    if (secretHash === null) throw new Error("no such secret");
    const now = Math.floor(this.#clock.now().getTime() / 1000);
    const token = await new SignJWT({ sv: secretDigest(secretHash) })
      .setProtectedHeader({ alg: ALGORITHM, kid: signing.kid, typ: "at+jwt" })
      .setSubject(client.clientId)
      .setAudience(AUDIENCE)
      .setIssuedAt(now)
      .setExpirationTime(now + ACCESS_TOKEN_TTL_SECONDS)
      .sign(signing.key);
    return { token, expiresIn: ACCESS_TOKEN_TTL_SECONDS };
  }

  /** Which of the client's secrets the token was issued for, if it is valid for this client now. */
  async verify(token: string, client: ScimClient): Promise<SecretUsed | undefined> {
    let sv: unknown;
    try {
      const { payload } = await jwtVerify(
        token,
        (header) => {
          const found = this.#keys.find((k) => k.kid === header.kid);
          if (found === undefined) throw new Error("unknown key");
          return found.key;
        },
        {
          algorithms: [ALGORITHM],
          audience: AUDIENCE,
          subject: client.clientId,
          currentDate: this.#clock.now(),
        },
      );
      sv = payload.sv;
    } catch {
      return undefined;
    }
    if (typeof sv !== "string") return undefined;
    if (sv === secretDigest(client.secretHash)) return "current";
    const previousLive =
      client.previousSecretHash !== null &&
      client.previousSecretExpireTime !== null &&
      client.previousSecretExpireTime.getTime() > this.#clock.now().getTime();
    return previousLive && client.previousSecretHash !== null && sv === secretDigest(client.previousSecretHash)
      ? "previous"
      : undefined;
  }
}

/** A digest of the stored hash: it identifies a secret without revealing anything an attacker could test against. */
const secretDigest = (secretHash: string): string =>
  createHash("sha256").update(`roster-secret-version:${secretHash}`).digest("base64url").slice(0, 22);
