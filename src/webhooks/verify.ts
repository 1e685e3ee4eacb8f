import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Receiver-side check of a Roster webhook, exported as `roster/webhooks/verify`. Self-contained (only
 * node:crypto), so it may also be copied into a receiver as is.
 */
export interface VerifyOptions {
  /** How far `t` may be from now, either way, in milliseconds. Default 300 000 (5 minutes). */
  readonly toleranceMs?: number;
  /** The receiver's current time (unix ms or a Date). Default: Date.now(). */
  readonly now?: number | Date;
}

export const DEFAULT_TOLERANCE_MS = 5 * 60 * 1000;

const HEX_SHA256 = /^[0-9a-f]{64}$/;

/**
 * True when `header` (`t=<unix ms>,s=<hex HMAC-SHA256 of "t.body">`) signs `rawBody` with `secret` and `t` is
 * within the tolerance. `rawBody` must be the bytes as received (not re-serialised JSON). Several `s=` values are
 * accepted (any may match). Comparison is constant-time.
 */
export function verifyWebhookSignature(
  secret: string,
  header: string | null | undefined,
  rawBody: string | Uint8Array,
  options: VerifyOptions = {},
): boolean {
  if (typeof header !== "string" || secret === "") return false;
  let timestamp: string | undefined;
  const signatures: string[] = [];
  for (const part of header.split(",")) {
    const eq = part.indexOf("=");
    if (eq < 0) return false;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === "t") {
      if (timestamp !== undefined) return false;
      timestamp = value;
    } else if (key === "s") signatures.push(value.toLowerCase());
  }
  if (timestamp === undefined || !/^\d{1,16}$/.test(timestamp) || signatures.length === 0) return false;

  const now =
    options.now === undefined ? Date.now() : typeof options.now === "number" ? options.now : options.now.getTime();
  const tolerance = options.toleranceMs ?? DEFAULT_TOLERANCE_MS;
  if (Math.abs(now - Number(timestamp)) > tolerance) return false;

  const expected = createHmac("sha256", secret).update(`${timestamp}.`).update(rawBody).digest();
  let valid = false;
  for (const s of signatures) {
    if (!HEX_SHA256.test(s)) continue;
    // Both sides are 32 bytes here, so timingSafeEqual leaks nothing about the secret or the expected value.
    if (timingSafeEqual(expected, Buffer.from(s, "hex"))) valid = true;
  }
  return valid;
}
