import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const sha256Hex = (value: string | Buffer): string => createHash("sha256").update(value).digest("hex");

export const hmacSha256Hex = (key: string | Buffer, value: string | Buffer): string =>
  createHmac("sha256", key).update(value).digest("hex");

/** Constant-time string comparison; unequal lengths compare a digest so timing does not leak the length. */
export const constantTimeEqual = (a: string, b: string): boolean =>
  constantTimeEqualBytes(Buffer.from(a), Buffer.from(b));

/** constantTimeEqual of bytes. */
export function constantTimeEqualBytes(a: Buffer, b: Buffer): boolean {
  if (a.length !== b.length) {
    timingSafeEqual(a, a);
    return false;
  }
  return timingSafeEqual(a, b);
}

/** Salted SHA-256 for high-entropy shared secrets (SCIM client secrets, admin token): `salt$hex`. */
export function hashSecret(secret: string, salt: string = randomBytes(16).toString("base64url")): string {
  return `${salt}$${sha256Hex(`${salt}:${secret}`)}`;
}

export function verifySecret(secret: string, stored: string): boolean {
  const i = stored.indexOf("$");
  if (i < 0) return false;
  return constantTimeEqual(hashSecret(secret, stored.slice(0, i)), stored);
}

/**
 * AES-256-GCM with the ROSTER_SECRETS key ring: the first key encrypts, every key decrypts (rotation).
 * Format: `v2.<key id>.<iv>.<tag>.<ciphertext>`, all base64url; the key id (a hash of the key, revealing nothing
 * of it) names the key that sealed the value, so values sealed with an older key are found without decrypting.
 * Values of the earlier format `v1.<iv>.<tag>.<ciphertext>` carry no key id and are tried with every key.
 */
export class SecretBox {
  readonly #keys: readonly { readonly id: string; readonly key: Buffer }[];
  readonly #secrets: readonly Buffer[];

  constructor(secrets: readonly Buffer[]) {
    if (secrets.length === 0) throw new Error("SecretBox needs at least one key");
    this.#secrets = secrets;
    this.#keys = secrets.map((s) => {
      const key = createHash("sha256").update("roster-secretbox:").update(s).digest();
      const id = createHash("sha256").update("roster-secretbox-key-id:").update(key).digest().subarray(0, 6);
      return { id: id.toString("base64url"), key };
    });
  }

  /**
   * One MAC key per key of the ring, in its order, derived for `purpose` alone: a token signed with the first still
   * verifies with the others' after a rotation, and no two uses share a key.
   */
  derivedKeys(purpose: string): Buffer[] {
    return this.#secrets.map((s) => createHmac("sha256", s).update(purpose).digest());
  }

  /** The id of the key that seals new values (the first of ROSTER_SECRETS). */
  get primaryKeyId(): string {
    return (this.#keys[0] as { id: string }).id;
  }

  /** The prefix of every value sealed with the first key; anything else is due for re-sealing. */
  get primaryPrefix(): string {
    return `v2.${this.primaryKeyId}.`;
  }

  seal(plaintext: string): string {
    const { id, key } = this.#keys[0] as { id: string; key: Buffer };
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return [
      "v2",
      id,
      iv.toString("base64url"),
      cipher.getAuthTag().toString("base64url"),
      ct.toString("base64url"),
    ].join(".");
  }

  open(sealed: string): string {
    const parts = sealed.split(".");
    if (parts[0] === "v2" && parts.length === 5) {
      const [, id, iv, tag, ct] = parts as [string, string, string, string, string];
      const entry = this.#keys.find((k) => k.id === id);
      if (entry === undefined) throw new Error("the key that sealed this value is not in ROSTER_SECRETS");
      return decrypt(entry.key, iv, tag, ct);
    }
    if (parts[0] === "v1" && parts.length === 4) {
      const [, iv, tag, ct] = parts as [string, string, string, string];
      for (const { key } of this.#keys) {
        try {
          return decrypt(key, iv, tag, ct);
        } catch {
          // try the next key of the ring
        }
      }
      throw new Error("no key of ROSTER_SECRETS opens this value");
    }
    throw new Error("sealed value has an unknown format");
  }
}

function decrypt(key: Buffer, iv: string, tag: string, ct: string): string {
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
}
