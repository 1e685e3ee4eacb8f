import { createHmac } from "node:crypto";

/** Spec 6: the signature header's name. Node lower-cases incoming header names: read `service-signature`. */
export const SIGNATURE_HEADER = "Service-Signature";

/** Spec 6: hex HMAC-SHA256 of `t` + "." + body, keyed by the webhook secret. `t` is in unix milliseconds. */
export function computeSignature(secret: string, timestampMs: number, body: string | Uint8Array): string {
  return createHmac("sha256", secret).update(`${timestampMs}.`).update(body).digest("hex");
}

/** `t=<unix ms>,s=<hex>`: sign exactly the bytes that are sent (STYLE.md). */
export function signatureHeader(secret: string, timestampMs: number, body: string): string {
  return `t=${timestampMs},s=${computeSignature(secret, timestampMs, body)}`;
}
