import { randomBytes } from "node:crypto";

let pool = randomBytes(4096);
let offset = 0;

/** Makes the ids of one writer: `next(now)` for the instant `now` (milliseconds). */
export type MonotonicIds = (now: number) => string;

/**
 * RFC 9562 §6.2 method 1: UUIDv7s whose 12-bit rand_a is a counter within the millisecond, so that the ids one
 * source makes sort in the order they were made even when the clock does not move (a fixed test clock, a burst
 * within one millisecond). Newest-first pages and keyset tokens rely on that order. Each writer (the request log, the
 * audit trail of one app) has a source of its own: another app's clock in the same process (a test's, set days
 * ahead) never pushes its ids forward.
 */
export function monotonicUuidv7Source(): MonotonicIds {
  let lastMs = -1;
  let counter = 0;
  return (now) => {
    let ms = Math.max(0, Math.floor(now));
    if (ms <= lastMs) {
      ms = lastMs;
      counter += 1;
      if (counter > 0xfff) {
        ms += 1;
        counter = 0;
      }
    } else counter = 0;
    lastMs = ms;
    if (offset + 8 > pool.length) {
      pool = randomBytes(4096);
      offset = 0;
    }
    const bytes = Buffer.allocUnsafe(16);
    bytes.writeUIntBE(ms, 0, 6);
    bytes[6] = 0x70 | (counter >> 8);
    bytes[7] = counter & 0xff;
    pool.copy(bytes, 8, offset, offset + 8);
    offset += 8;
    bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
    const hex = bytes.toString("hex");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  };
}
