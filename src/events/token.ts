import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * A position in the events feed (`after` / `next_after`): the (txid, seq) of the last event handed out — or of the
 * horizon, for `now` — and the time of that event, which says whether events after it may have been pruned.
 */
export interface FeedPosition {
  /** xid8, as decimal text. */
  readonly txid: string;
  readonly seq: number;
  /** Unix milliseconds. */
  readonly timeMs: number;
}

export const START: FeedPosition = { txid: "0", seq: 0, timeMs: 0 };

/** A token as read: signed by this service for this organization, or of the earlier unsigned format. */
export type DecodedToken =
  | { readonly kind: "signed"; readonly position: FeedPosition }
  | { readonly kind: "legacy"; readonly position: FeedPosition };

// Token bytes: version (1) | txid, uint64 BE (8) | seq, uint64 BE (8) | time ms, uint64 BE (8) | HMAC-SHA256 (32),
// then base64url. The organization is not in the bytes but in the MAC: a token of another organization fails it.
const VERSION = 2;
const BODY_BYTES = 1 + 8 + 8 + 8;
const MAC_BYTES = 32;
const U64 = 2n ** 64n;

/**
 * Signs and reads feed tokens. Signed with the first of the keys, verified with any of them, so a token issued
 * before a rotation of ROSTER_SECRETS still reads while its key is listed. The keys are derived for this use alone.
 */
export class FeedTokens {
  readonly #keys: readonly Buffer[];

  constructor(keys: readonly Buffer[]) {
    if (keys.length === 0) throw new Error("FeedTokens needs at least one key");
    this.#keys = keys;
  }

  encode(organizationId: string, p: FeedPosition): string {
    const body = Buffer.alloc(BODY_BYTES);
    body.writeUInt8(VERSION, 0);
    body.writeBigUInt64BE(BigInt(p.txid), 1);
    body.writeBigUInt64BE(BigInt(p.seq), 9);
    body.writeBigUInt64BE(BigInt(p.timeMs), 17);
    return Buffer.concat([body, mac(this.#keys[0] as Buffer, organizationId, body)]).toString("base64url");
  }

  /** Undefined when the token is neither signed by this service for this organization nor of the legacy format. */
  decode(organizationId: string, token: string): DecodedToken | undefined {
    if (!/^[A-Za-z0-9_-]{1,120}$/.test(token)) return undefined;
    const bytes = Buffer.from(token, "base64url");
    if (bytes.length === BODY_BYTES + MAC_BYTES && bytes[0] === VERSION && bytes.toString("base64url") === token) {
      const body = bytes.subarray(0, BODY_BYTES);
      const given = bytes.subarray(BODY_BYTES);
      let valid = false;
      for (const key of this.#keys) valid = timingSafeEqual(mac(key, organizationId, body), given) || valid;
      if (!valid) return undefined;
      const seq = Number(body.readBigUInt64BE(9));
      const timeMs = Number(body.readBigUInt64BE(17));
      if (!Number.isSafeInteger(seq) || !Number.isSafeInteger(timeMs)) return undefined;
      return { kind: "signed", position: { txid: body.readBigUInt64BE(1).toString(), seq, timeMs } };
    }
    const legacy = decodeLegacy(bytes.toString("utf8"));
    return legacy === undefined ? undefined : { kind: "legacy", position: legacy };
  }
}

function mac(key: Buffer, organizationId: string, body: Buffer): Buffer {
  return createHmac("sha256", key).update(organizationId.toLowerCase()).update("\n").update(body).digest();
}

const LEGACY = /^v1\.(\d{1,20})\.(\d{1,19})\.(\d{1,15})$/;

/** The unsigned `v1.<txid>.<seq>.<ms>` tokens issued before tokens were signed (docs/decisions.md). */
function decodeLegacy(text: string): FeedPosition | undefined {
  const m = LEGACY.exec(text);
  if (m === null) return undefined;
  const [, txid, seq, time] = m;
  if (txid === undefined || seq === undefined || time === undefined) return undefined;
  const position = { txid: BigInt(txid).toString(), seq: Number(seq), timeMs: Number(time) };
  if (!Number.isSafeInteger(position.seq) || !Number.isSafeInteger(position.timeMs)) return undefined;
  // xid8 is unsigned 64-bit.
  if (BigInt(position.txid) >= U64) return undefined;
  return position;
}

/** The legacy spelling of a position: tests use it to stand for a token issued before signing. */
export function legacyToken(p: FeedPosition): string {
  return Buffer.from(`v1.${p.txid}.${p.seq}.${p.timeMs}`, "utf8").toString("base64url");
}
