import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { Clock } from "../../platform/clock.js";
import { isUuid } from "../../platform/ids.js";
import { ScimError } from "../errors.js";
import { CURSOR_TTL_SECONDS } from "../limits.js";
import type { ResourceKind } from "./filter.js";

/** What a cursor is bound to: reusing it with another client, resource or query is invalidCursor. */
export interface CursorContext {
  clientId: string;
  resource: ResourceKind;
  queryDigest: string;
}

/** A short, stable digest of the query parameters a cursor must not outlive; callers pass the raw query text. */
export function queryDigest(parts: {
  filter?: string | undefined;
  count: number;
  attributes?: string | undefined;
  excludedAttributes?: string | undefined;
}): string {
  const canonical = JSON.stringify([
    parts.filter ?? null,
    parts.count,
    parts.attributes ?? null,
    parts.excludedAttributes ?? null,
  ]);
  return createHash("sha256").update(canonical).digest("base64url").slice(0, 22);
}

// Token bytes: version (1) | issued-at ms, uint64 BE (8) | last id (16) | HMAC-SHA256 (32), then base64url.
const VERSION = 1;
const BODY_BYTES = 1 + 8 + 16;
const MAC_BYTES = 32;
const RESTART = "restart pagination from the first page with an empty cursor";

/**
 * RFC 9865 cursors, stateless so any instance can continue a listing (nothing shared lives in process memory).
 * Signed with the first of ROSTER_SECRETS, verified with any of them (rotation).
 */
export class CursorCodec {
  readonly #keys: readonly Buffer[];
  readonly #clock: Clock;

  constructor(secrets: readonly Buffer[], clock: Clock) {
    if (secrets.length === 0) throw new Error("CursorCodec needs at least one secret");
    // Derived keys keep cursor MACs apart from every other use of the same secrets.
    this.#keys = secrets.map((s) => createHmac("sha256", s).update("roster-cursor-key-v1").digest());
    this.#clock = clock;
  }

  encode(ctx: CursorContext, lastId: string): string {
    if (!isUuid(lastId)) throw new Error("cursor lastId must be a UUID");
    const body = Buffer.alloc(BODY_BYTES);
    body.writeUInt8(VERSION, 0);
    body.writeBigUInt64BE(BigInt(this.#clock.now().getTime()), 1);
    Buffer.from(lastId.replaceAll("-", ""), "hex").copy(body, 9);
    return Buffer.concat([body, mac(this.#signingKey(), ctx, body)]).toString("base64url");
  }

  decode(ctx: CursorContext, token: string): { lastId: string } {
    const bytes = Buffer.from(token, "base64url");
    // Buffer.from skips characters outside the alphabet; re-encoding rejects anything non-canonical.
    if (bytes.length !== BODY_BYTES + MAC_BYTES || bytes.toString("base64url") !== token || bytes[0] !== VERSION) {
      throw invalidCursor();
    }
    const body = bytes.subarray(0, BODY_BYTES);
    const given = bytes.subarray(BODY_BYTES);
    let valid = false;
    for (const key of this.#keys) valid = timingSafeEqual(mac(key, ctx, body), given) || valid;
    if (!valid) throw invalidCursor();

    // Only an authentic issue time may produce expiredCursor: a forged one is invalidCursor.
    const ageMs = this.#clock.now().getTime() - Number(body.readBigUInt64BE(1));
    if (ageMs > CURSOR_TTL_SECONDS * 1000) {
      throw new ScimError(400, "expiredCursor", `cursor expired after ${CURSOR_TTL_SECONDS} seconds: ${RESTART}`);
    }
    const hex = body.subarray(9).toString("hex");
    return {
      lastId: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`,
    };
  }

  #signingKey(): Buffer {
    const [key] = this.#keys;
    if (key === undefined) throw new Error("CursorCodec has no signing key");
    return key;
  }
}

function mac(key: Buffer, ctx: CursorContext, body: Buffer): Buffer {
  // JSON framing keeps the bound fields unambiguous whatever characters they contain.
  const bound = JSON.stringify([ctx.clientId, ctx.resource, ctx.queryDigest]);
  return createHmac("sha256", key).update(bound).update("\n").update(body).digest();
}

const invalidCursor = (): ScimError =>
  new ScimError(400, "invalidCursor", `cursor is invalid or belongs to another query: ${RESTART}`);
