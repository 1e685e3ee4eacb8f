import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const sha256Hex = (value: string | Buffer): string => createHash("sha256").update(value).digest("hex");

export const hmacSha256Hex = (key: string | Buffer, value: string | Buffer): string =>
  createHmac("sha256", key).update(value).digest("hex");

/** Constant-time string comparison; unequal lengths compare a digest so timing does not leak the length. */
export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
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
 * Format: v1.<key index hint>.<iv>.<tag>.<ciphertext>, all base64url.
 */
export class SecretBox {
  readonly #keys: readonly Buffer[];

  constructor(secrets: readonly Buffer[]) {
    if (secrets.length === 0) throw new Error("SecretBox needs at least one key");
    this.#keys = secrets.map((s) => createHash("sha256").update("roster-secretbox:").update(s).digest());
  }

  seal(plaintext: string): string {
    const key = this.#keys[0] as Buffer;
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return ["v1", iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), ct.toString("base64url")].join(
      ".",
    );
  }

  open(sealed: string): string {
    const [version, iv, tag, ct] = sealed.split(".");
    if (version !== "v1" || iv === undefined || tag === undefined || ct === undefined) {
      throw new Error("sealed value has an unknown format");
    }
    for (const key of this.#keys) {
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
        decipher.setAuthTag(Buffer.from(tag, "base64url"));
        return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
      } catch {
        // try the next key of the ring
      }
    }
    throw new Error("no key of ROSTER_SECRETS opens this value");
  }
}
