import { createHmac, randomBytes } from "node:crypto";

/** The signature header's name. Node lower-cases incoming header names: read `service-signature`. */
export const SIGNATURE_HEADER = "Service-Signature";

/** Hex HMAC-SHA256 of `t` + "." + body, keyed by the webhook secret. `t` is in unix milliseconds. */
export function computeSignature(secret: string, timestampMs: number, body: string | Uint8Array): string {
  return createHmac("sha256", secret).update(`${timestampMs}.`).update(body).digest("hex");
}

/** `t=<unix ms>,s=<hex>`: sign exactly the bytes that are sent, so a receiver verifies what it read. */
export function signatureHeader(secret: string, timestampMs: number, body: string): string {
  return `t=${timestampMs},s=${computeSignature(secret, timestampMs, body)}`;
}

/** Standard Webhooks (standardwebhooks.com): the headers every delivery carries beside `Service-Signature`. */
export const STANDARD_ID_HEADER = "webhook-id";
export const STANDARD_TIMESTAMP_HEADER = "webhook-timestamp";
export const STANDARD_SIGNATURE_HEADER = "webhook-signature";

const WHSEC = "whsec_";
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;

/**
 * The Standard Webhooks signing key of a webhook secret: a `whsec_` secret is the base64 of its key, as the
 * scheme's libraries read it; any other secret (or a `whsec_` one whose rest is not base64) is used as its UTF-8
 * bytes — what those libraries take with `{ format: "raw" }` or a byte array (docs/webhooks.md).
 */
export function standardWebhookKey(secret: string): Buffer {
  const rest = secret.startsWith(WHSEC) ? secret.slice(WHSEC.length) : undefined;
  return rest !== undefined && BASE64.test(rest) ? Buffer.from(rest, "base64") : Buffer.from(secret, "utf8");
}

/** `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, the timestamp in unix seconds. */
export function standardSignature(key: Buffer, webhookId: string, timestampSec: number, body: string): string {
  return `v1,${createHmac("sha256", key).update(`${webhookId}.${timestampSec}.`).update(body).digest("base64")}`;
}

/** A fresh secret in the Standard Webhooks form: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `${WHSEC}${randomBytes(32).toString("base64")}`;
}
