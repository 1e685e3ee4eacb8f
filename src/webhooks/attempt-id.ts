import { uuidv7 } from "../platform/ids.js";

let lastMs = 0;
let counter = 0;

/**
 * UUIDv7 that increase strictly within this process (RFC 9562 §6.2 method 1: a 12-bit counter in rand_a), so the
 * event log's newest-first order (attempted_at, id) holds for attempts made in the same millisecond.
 */
export function attemptId(nowMs: number): string {
  let ms = Math.max(nowMs, lastMs);
  if (ms === lastMs) {
    counter++;
    if (counter > 0xfff) {
      ms++;
      counter = 0;
    }
  } else counter = 0;
  lastMs = ms;
  const id = uuidv7(ms);
  const randA = (0x7000 | counter).toString(16);
  return `${id.slice(0, 14)}${randA}${id.slice(18)}`;
}
