import { randomBytes } from "node:crypto";
import { sha256Hex } from "../platform/crypto.js";

/** Visible prefix of every secret Roster issues, so leaked keys are recognisable (secret scanners, logs). */
export const ISSUED_KEY_PREFIX = "rsk_";
/** Bytes of entropy in an issued secret (at least 32, so a secret cannot be guessed). */
export const SECRET_BYTES = 32;

export interface IssuedSecret {
  /** `rsk_<public id>_<43 base64url characters>`: shown once, never stored. */
  readonly secret: string;
  /** `rsk_<public id>`: stored and shown, identifies the secret without revealing it. */
  readonly prefix: string;
  readonly digest: Buffer;
}

/** A fresh issued secret: 8 hex characters of public id plus 256 random bits. */
export function generateIssuedSecret(): IssuedSecret {
  const prefix = `${ISSUED_KEY_PREFIX}${randomBytes(4).toString("hex")}`;
  const secret = `${prefix}_${randomBytes(SECRET_BYTES).toString("base64url")}`;
  return { secret, prefix, digest: digestOf(secret) };
}

/** SHA-256 of the exact key bytes (UTF-8): what is stored and looked up. A fast hash suffices for ≥ 128-bit keys. */
export const digestOf = (key: string): Buffer => Buffer.from(sha256Hex(key), "hex");
