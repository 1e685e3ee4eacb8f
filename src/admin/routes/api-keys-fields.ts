import type { Static } from "@sinclair/typebox";
import {
  type ApiKeyFields,
  MAX_METADATA_BYTES,
  MAX_RATE_LIMIT_PERIOD_SECONDS,
  type RateLimit,
} from "../../apikeys/model.js";
import { invalidArgument } from "../errors.js";
import type { CreateIssuedKeyBody, RateLimitBody } from "../schemas/api-keys.js";

/**
 * What a schema cannot say about API key fields, read from bodies the schema already checked: durations and times
 * turned into numbers and dates, repeated rate limit names, the metadata size. Messages name the field, never a
 * value (a misplaced secret must not come back in an error).
 */

type RateLimitInput = Static<typeof RateLimitBody>;
type KeyFieldsInput = Omit<Static<typeof CreateIssuedKeyBody>, "organization_id">;

const DURATION_RE = /^(\d{1,10})s$/;

/**
 * A duration in whole seconds: the protobuf JSON form (`"3600s"`) or a plain non-negative integer of seconds.
 * Fractional seconds are refused: windows and grace periods are counted in whole seconds.
 */
export function parseDuration(v: unknown, field: string, maxSeconds: number): number {
  let seconds: number | undefined;
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) seconds = v;
  if (typeof v === "string") {
    const m = DURATION_RE.exec(v);
    if (m?.[1] !== undefined) seconds = Number(m[1]);
  }
  if (seconds === undefined) throw invalidArgument(`${field} must be a duration like "3600s" or whole seconds`);
  if (seconds > maxSeconds) throw invalidArgument(`${field} must be at most ${maxSeconds}s`);
  return seconds;
}

export const formatDuration = (seconds: number): string => `${seconds}s`;

const RFC3339_RE = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** RFC 3339 timestamp with an explicit offset, e.g. `2026-12-31T23:59:59Z`; "" and null are none. */
export function parseTime(v: unknown, field: string): Date | null {
  if (v === undefined || v === null || v === "") return null;
  if (typeof v !== "string" || !RFC3339_RE.test(v)) {
    throw invalidArgument(`${field} must be an RFC 3339 timestamp such as 2026-12-31T23:59:59Z`);
  }
  const ms = Date.parse(v);
  if (Number.isNaN(ms)) throw invalidArgument(`${field} must be a valid RFC 3339 timestamp`);
  return new Date(ms);
}

/** `[{name, limit, period}]` as the schema checked it: periods in seconds, names unique per key. */
export function parseRateLimits(v: readonly RateLimitInput[] | null | undefined, field: string): RateLimit[] {
  const out: RateLimit[] = [];
  (v ?? []).forEach((item, i) => {
    const at = `${field}[${i}]`;
    const name = item.name ?? "default";
    if (out.some((r) => r.name === name)) throw invalidArgument(`${at}.name repeats the rate limit name ${name}`);
    const periodSeconds = parseDuration(item.period, `${at}.period`, MAX_RATE_LIMIT_PERIOD_SECONDS);
    if (periodSeconds === 0) throw invalidArgument(`${at}.period must be at least 1s`);
    out.push({ name, limit: item.limit, periodSeconds });
  });
  return out;
}

/** Scopes keep their order; repeats are dropped. */
export const parseScopes = (v: readonly string[] | null | undefined): string[] => [...new Set(v ?? [])];

export function parseMetadata(v: Record<string, unknown> | null | undefined, field: string): Record<string, unknown> {
  const metadata = v ?? {};
  if (Buffer.byteLength(JSON.stringify(metadata)) > MAX_METADATA_BYTES) {
    throw invalidArgument(`${field} must be at most ${MAX_METADATA_BYTES} bytes of JSON`);
  }
  return metadata;
}

/** The mutable fields of a create or import body; `prefix` names where they are (`requests[3].`). */
export function keyFieldsOf(body: KeyFieldsInput, prefix: string): ApiKeyFields {
  const at = (f: string) => `${prefix}${f}`;
  return {
    name: body.name,
    actorId: body.actor_id === undefined || body.actor_id === null || body.actor_id === "" ? null : body.actor_id,
    scopes: parseScopes(body.scopes),
    metadata: parseMetadata(body.metadata, at("metadata")),
    rateLimits: parseRateLimits(body.rate_limits, at("rate_limits")),
    expireTime: parseTime(body.expire_time, at("expire_time")),
  };
}
