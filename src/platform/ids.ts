import { randomBytes } from "node:crypto";

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: unknown): value is string => typeof value === "string" && UUID_RE.test(value);

/** Random bytes fetched 4 KiB at a time: a randomBytes call per id would cost more than the rest of making it. */
const POOL_BYTES = 4096;
let pool = randomBytes(POOL_BYTES);
let poolOffset = 0;

function takeRandom(into: Buffer): void {
  if (poolOffset + into.length > POOL_BYTES) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  pool.copy(into, 0, poolOffset, poolOffset + into.length);
  poolOffset += into.length;
}

/**
 * RFC 9562 UUIDv7: time-ordered, so new rows land at the right edge of the primary-key B-tree
 * (cheap inserts) while ids stay unguessable enough (74 random bits).
 */
export function uuidv7(now: number = Date.now()): string {
  const bytes = Buffer.allocUnsafe(16);
  takeRandom(bytes);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x70;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A random URL-safe token with the given bytes of entropy, optionally prefixed (`rst_…`). */
export const randomToken = (bytes = 32, prefix = ""): string => prefix + randomBytes(bytes).toString("base64url");
