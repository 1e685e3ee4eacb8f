/**
 * A position in the events feed (`after` / `next_after`): the (txid, seq) of the last event handed out — or of the
 * horizon, for `now` — and the time of that event, which says whether events after it may have been pruned.
 * Opaque to consumers; not a secret (a forged token only skips or repeats events of an organization the caller
 * may read anyway), so it is encoded, not signed.
 */
export interface FeedPosition {
  /** xid8, as decimal text. */
  readonly txid: string;
  readonly seq: number;
  /** Unix milliseconds. */
  readonly timeMs: number;
}

const FORMAT = /^v1\.(\d{1,20})\.(\d{1,19})\.(\d{1,15})$/;

export const START: FeedPosition = { txid: "0", seq: 0, timeMs: 0 };

export function encodePosition(p: FeedPosition): string {
  return Buffer.from(`v1.${p.txid}.${p.seq}.${p.timeMs}`, "utf8").toString("base64url");
}

/** Undefined when the token is not one this service issued. */
export function decodePosition(token: string): FeedPosition | undefined {
  if (!/^[A-Za-z0-9_-]{1,120}$/.test(token)) return undefined;
  const m = FORMAT.exec(Buffer.from(token, "base64url").toString("utf8"));
  if (m === null) return undefined;
  const [, txid, seq, time] = m;
  if (txid === undefined || seq === undefined || time === undefined) return undefined;
  const position = { txid: BigInt(txid).toString(), seq: Number(seq), timeMs: Number(time) };
  if (!Number.isSafeInteger(position.seq) || !Number.isSafeInteger(position.timeMs)) return undefined;
  // xid8 is unsigned 64-bit.
  if (BigInt(position.txid) >= 2n ** 64n) return undefined;
  return position;
}
