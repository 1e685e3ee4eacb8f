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
  /** `sortBy` and `sortOrder`; absent from the digest of an unsorted query, so those digests stay as they were. */
  sort?: string | undefined;
}): string {
  const canonical = JSON.stringify([
    parts.filter ?? null,
    parts.count,
    parts.attributes ?? null,
    parts.excludedAttributes ?? null,
    ...(parts.sort === undefined ? [] : [parts.sort]),
  ]);
  return createHash("sha256").update(canonical).digest("base64url").slice(0, 22);
}

// Token bytes, then base64url:
// - unsorted (version 1): version (1) | issued-at ms, uint64 BE (8) | last id (16) | HMAC-SHA256 (32);
// - sorted (version 2): the same, with the last row's sort value between the id and the MAC: a flag byte (0: the
//   row has no value, 1: it has one) and the value as UTF-8 text.
const VERSION = 1;
const SORTED = 2;
const BODY_BYTES = 1 + 8 + 16;
const MAC_BYTES = 32;

/** Where a page ends: the last row's id and, in a sorted listing, its sort value (text; null when it has none). */
export interface CursorPosition {
  readonly lastId: string;
  readonly sortValue?: string | null;
}
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

  /** `sortValue` (a string, or null for a row without one) makes a sorted cursor; undefined an unsorted one. */
  encode(ctx: CursorContext, lastId: string, sortValue?: string | null): string {
    if (!isUuid(lastId)) throw new Error("cursor lastId must be a UUID");
    const head = Buffer.alloc(BODY_BYTES);
    head.writeUInt8(sortValue === undefined ? VERSION : SORTED, 0);
    head.writeBigUInt64BE(BigInt(this.#clock.now().getTime()), 1);
    Buffer.from(lastId.replaceAll("-", ""), "hex").copy(head, 9);
    const body =
      sortValue === undefined
        ? head
        : Buffer.concat([head, Buffer.from([sortValue === null ? 0 : 1]), Buffer.from(sortValue ?? "", "utf8")]);
    return Buffer.concat([body, mac(this.#signingKey(), ctx, body)]).toString("base64url");
  }

  decode(ctx: CursorContext, token: string): CursorPosition {
    const bytes = Buffer.from(token, "base64url");
    const version = bytes[0];
    const size = version === VERSION ? BODY_BYTES + MAC_BYTES : BODY_BYTES + 1 + MAC_BYTES;
    // Buffer.from skips characters outside the alphabet; re-encoding rejects anything non-canonical.
    const wellFormed = (version === VERSION && bytes.length === size) || (version === SORTED && bytes.length >= size);
    if (!wellFormed || bytes.toString("base64url") !== token) throw invalidCursor();
    const body = bytes.subarray(0, bytes.length - MAC_BYTES);
    const given = bytes.subarray(bytes.length - MAC_BYTES);
    let valid = false;
    for (const key of this.#keys) valid = timingSafeEqual(mac(key, ctx, body), given) || valid;
    if (!valid) throw invalidCursor();

    // Only an authentic issue time may produce expiredCursor: a forged one is invalidCursor.
    const ageMs = this.#clock.now().getTime() - Number(body.readBigUInt64BE(1));
    if (ageMs > CURSOR_TTL_SECONDS * 1000) {
      throw new ScimError(400, "expiredCursor", `cursor expired after ${CURSOR_TTL_SECONDS} seconds: ${RESTART}`);
    }
    const hex = body.subarray(9, BODY_BYTES).toString("hex");
    const lastId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    if (version === VERSION) return { lastId };
    const flag = body[BODY_BYTES];
    if (flag !== 1 && !(flag === 0 && body.length === BODY_BYTES + 1)) throw invalidCursor();
    return { lastId, sortValue: flag === 0 ? null : body.subarray(BODY_BYTES + 1).toString("utf8") };
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

export const invalidCursor = (): ScimError =>
  new ScimError(400, "invalidCursor", `cursor is invalid or belongs to another query: ${RESTART}`);
