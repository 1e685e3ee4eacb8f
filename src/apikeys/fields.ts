import { AdminError, invalidArgument } from "../admin/errors.js";
import { requireUuid } from "../admin/paging.js";
import { isObject, type JsonObject } from "../admin/validate.js";
import type { ItemError } from "./batch.js";
import {
  type ApiKeyFields,
  MAX_ACTOR_ID_LENGTH,
  MAX_BATCH_IMPORT,
  MAX_METADATA_BYTES,
  MAX_NAME_LENGTH,
  MAX_RATE_LIMIT_PERIOD_SECONDS,
  MAX_RATE_LIMITS,
  MAX_RAW_KEY_LENGTH,
  MAX_SCOPE_LENGTH,
  MAX_SCOPES,
  MIN_RAW_KEY_LENGTH,
  type RateLimit,
} from "./model.js";
import { digestOf } from "./secrets.js";
import type { ImportItem } from "./service.js";

/**
 * Edge readers for API key fields: typed values or INVALID_ARGUMENT naming the field (never echoing a value, since
 * a misplaced secret must not come back in an error). `field` is the name to report, e.g. `requests[3].name`.
 */

export function parseName(v: unknown, field: string): string {
  if (typeof v !== "string") throw invalidArgument(`${field} must be a string`);
  if (v.length > MAX_NAME_LENGTH) throw invalidArgument(`${field} must be at most ${MAX_NAME_LENGTH} characters`);
  return v;
}

export function parseActorId(v: unknown, field: string): string | null {
  if (v === undefined || v === null || v === "") return null;
  if (typeof v !== "string") throw invalidArgument(`${field} must be a string`);
  if (v.length > MAX_ACTOR_ID_LENGTH)
    throw invalidArgument(`${field} must be at most ${MAX_ACTOR_ID_LENGTH} characters`);
  return v;
}

/** Scopes keep their order; repeats are dropped. */
export function parseScopes(v: unknown, field: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((s) => typeof s !== "string" || s === "" || s.length > MAX_SCOPE_LENGTH)) {
    throw invalidArgument(`${field} must be an array of non-empty strings of at most ${MAX_SCOPE_LENGTH} characters`);
  }
  if (v.length > MAX_SCOPES) throw invalidArgument(`${field} must have at most ${MAX_SCOPES} items`);
  return [...new Set(v as string[])];
}

export function parseMetadata(v: unknown, field: string): JsonObject {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw invalidArgument(`${field} must be a JSON object`);
  return checkMetadataSize(v, field);
}

export function checkMetadataSize(v: JsonObject, field = "metadata"): JsonObject {
  if (Buffer.byteLength(JSON.stringify(v)) > MAX_METADATA_BYTES) {
    throw invalidArgument(`${field} must be at most ${MAX_METADATA_BYTES} bytes of JSON`);
  }
  return v;
}

const RATE_LIMIT_NAME_RE = /^[A-Za-z0-9_.:-]{1,64}$/;

/** `[{name, limit, period}]`; `period` as for parseDuration; names unique per key. */
export function parseRateLimits(v: unknown, field: string): RateLimit[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw invalidArgument(`${field} must be an array of {name, limit, period}`);
  if (v.length > MAX_RATE_LIMITS) throw invalidArgument(`${field} must have at most ${MAX_RATE_LIMITS} items`);
  const out: RateLimit[] = [];
  v.forEach((item: unknown, i) => {
    const at = `${field}[${i}]`;
    if (!isObject(item)) throw invalidArgument(`${at} must be an object {name, limit, period}`);
    const name = item.name ?? "default";
    if (typeof name !== "string" || !RATE_LIMIT_NAME_RE.test(name)) {
      throw invalidArgument(`${at}.name must be 1-64 letters, digits or _ . : -`);
    }
    if (out.some((r) => r.name === name)) throw invalidArgument(`${at}.name repeats the rate limit name ${name}`);
    const limit = item.limit;
    if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 1 || limit > 1_000_000_000) {
      throw invalidArgument(`${at}.limit must be an integer from 1 to 1000000000`);
    }
    const periodSeconds = parseDuration(item.period, `${at}.period`, MAX_RATE_LIMIT_PERIOD_SECONDS);
    if (periodSeconds === 0) throw invalidArgument(`${at}.period must be at least 1s`);
    out.push({ name, limit, periodSeconds });
  });
  return out;
}

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

/** RFC 3339 timestamp with an explicit offset, e.g. `2026-12-31T23:59:59Z`. */
export function parseTime(v: unknown, field: string): Date | null {
  if (v === undefined || v === null || v === "") return null;
  if (typeof v !== "string" || !RFC3339_RE.test(v)) {
    throw invalidArgument(`${field} must be an RFC 3339 timestamp such as 2026-12-31T23:59:59Z`);
  }
  const ms = Date.parse(v);
  if (Number.isNaN(ms)) throw invalidArgument(`${field} must be a valid RFC 3339 timestamp`);
  return new Date(ms);
}

/** The mutable fields of a create or import body; `name` required, `actor_id` required when `requireActor`. */
export function parseKeyFields(body: JsonObject, prefix: string, requireActor: boolean): ApiKeyFields {
  const at = (f: string) => `${prefix}${f}`;
  if (body.name === undefined || body.name === null || body.name === "")
    throw invalidArgument(`${at("name")} is required`);
  const actorId = parseActorId(body.actor_id, at("actor_id"));
  if (requireActor && actorId === null) throw invalidArgument(`${at("actor_id")} is required`);
  return {
    name: parseName(body.name, at("name")),
    actorId,
    scopes: parseScopes(body.scopes, at("scopes")),
    metadata: parseMetadata(body.metadata, at("metadata")),
    rateLimits: parseRateLimits(body.rate_limits, at("rate_limits")),
    expireTime: parseTime(body.expire_time, at("expire_time")),
  };
}

/**
 * `{requests: [...]}` with 1 to 1000 items, else 400 for the whole request. Each item is validated on
 * its own: a bad item becomes its INVALID_ARGUMENT result, a raw key repeated in the batch an ALREADY_EXISTS one
 * (the first occurrence is imported). Raw keys are reduced to digests here and never appear in a message.
 */
export function parseBatchRequest(body: Record<string, unknown>): (ImportItem | ItemError)[] {
  const requests = body.requests;
  if (!Array.isArray(requests)) throw invalidArgument("requests must be an array of import items");
  if (requests.length === 0 || requests.length > MAX_BATCH_IMPORT) {
    throw invalidArgument(`requests must hold 1 to ${MAX_BATCH_IMPORT} items; got ${requests.length}`);
  }
  const firstIndexOf = new Map<string, number>();
  return requests.map((item: unknown, i): ImportItem | ItemError => {
    try {
      const parsed = parseItem(item, i);
      const hex = parsed.digest.toString("hex");
      const earlier = firstIndexOf.get(hex);
      if (earlier !== undefined) {
        return { error: { code: "ALREADY_EXISTS", message: `raw_key repeats the one of requests[${earlier}]` } };
      }
      firstIndexOf.set(hex, i);
      return parsed;
    } catch (e) {
      if (e instanceof AdminError) return { error: { code: e.status, message: e.message } };
      throw e;
    }
  });
}

function parseItem(item: unknown, i: number): ImportItem {
  const at = `requests[${i}].`;
  if (!isObject(item)) throw invalidArgument(`requests[${i}] must be a JSON object`);
  const raw = item.raw_key;
  if (raw === undefined || raw === null || raw === "") throw invalidArgument(`${at}raw_key is required`);
  if (typeof raw !== "string") throw invalidArgument(`${at}raw_key must be a string`);
  if (raw.length < MIN_RAW_KEY_LENGTH || raw.length > MAX_RAW_KEY_LENGTH) {
    throw invalidArgument(`${at}raw_key must be ${MIN_RAW_KEY_LENGTH} to ${MAX_RAW_KEY_LENGTH} characters`);
  }
  const org = item.organization_id;
  let organizationId: string | null = null;
  if (org !== undefined && org !== null && org !== "") {
    if (typeof org !== "string") throw invalidArgument(`${at}organization_id must be a string`);
    organizationId = requireUuid(org, `${at}organization_id`);
  }
  return { digest: digestOf(raw), organizationId, fields: parseKeyFields(item, at, true) };
}
