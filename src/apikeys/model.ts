import { ApiKeyError } from "./errors.js";

/** API key shapes (docs/api-keys.md), the limits that apply to them, and how a change applies to a key. */

export type ApiKeyKind = "issued" | "imported";

/** Fixed-window limit: at most `limit` verifications per `periodSeconds`, counted in the database. */
export interface RateLimit {
  readonly name: string;
  readonly limit: number;
  readonly periodSeconds: number;
}

export interface ApiKey {
  readonly keyId: string;
  readonly kind: ApiKeyKind;
  readonly organizationId: string | null;
  readonly name: string;
  readonly actorId: string | null;
  /** Issued keys: the visible start of the current secret. Imported keys: null (the raw key is never echoed). */
  readonly prefix: string | null;
  readonly scopes: readonly string[];
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly rateLimits: readonly RateLimit[];
  readonly expireTime: Date | null;
  readonly revokeTime: Date | null;
  /** Why the key was revoked: `ADMIN` (DELETE) or `ACTOR_DELETED` (its identity was deleted). */
  readonly revokeReason: string | null;
  /**
   * Read, not stored: the key acts for an identity of its own organization that is inactive now, and the
   * organization lets keys follow their identity. Such a key is suspended until the identity is active again.
   */
  readonly actorInactive: boolean;
  readonly createTime: Date;
  readonly updateTime: Date;
}

/** The mutable fields of a key, as create and update take them. */
export interface ApiKeyFields {
  readonly name: string;
  readonly actorId: string | null;
  readonly scopes: readonly string[];
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly rateLimits: readonly RateLimit[];
  readonly expireTime: Date | null;
}

export type ApiKeyState = "ACTIVE" | "EXPIRED" | "REVOKED" | "SUSPENDED";

/** Final states before temporary ones: revoked, then expired, then suspended (docs/api-keys.md). */
export const stateOf = (key: ApiKey, now: Date): ApiKeyState => {
  if (key.revokeTime !== null) return "REVOKED";
  if (key.expireTime !== null && key.expireTime.getTime() <= now.getTime()) return "EXPIRED";
  if (key.actorInactive) return "SUSPENDED";
  return "ACTIVE";
};

/** `suspend_reason` of a suspended key: the only cause is an inactive actor identity. */
export const ACTOR_INACTIVE = "ACTOR_INACTIVE";
export const REVOKED_BY_ADMIN = "ADMIN";

/** At most 1000 keys per batch import (docs/api-keys.md). */
export const MAX_BATCH_IMPORT = 1000;
/** Imported raw keys shorter than this are refused (INVALID_ARGUMENT): they would be guessable. */
export const MIN_RAW_KEY_LENGTH = 16;
export const MAX_RAW_KEY_LENGTH = 4096;
/** Rotation grace period: the superseded secret keeps verifying this long at most (at most a day). */
export const MAX_GRACE_PERIOD_SECONDS = 86_400;
export const MAX_NAME_LENGTH = 256;
export const MAX_ACTOR_ID_LENGTH = 256;
export const MAX_SCOPES = 100;
export const MAX_SCOPE_LENGTH = 256;
export const MAX_METADATA_BYTES = 16 * 1024;
export const MAX_RATE_LIMITS = 10;
export const MAX_RATE_LIMIT_PERIOD_SECONDS = 30 * 86_400;

type JsonObject = Record<string, unknown>;

/** One typed change; `metadata_entry` addresses a nested path inside metadata (`metadata.team`). */
export type KeyChange =
  | { readonly field: "name"; readonly value: string }
  | { readonly field: "actor_id"; readonly value: string | null }
  | { readonly field: "scopes"; readonly value: string[] }
  | { readonly field: "metadata"; readonly value: JsonObject }
  | { readonly field: "metadata_entry"; readonly path: readonly string[]; readonly value: unknown }
  | { readonly field: "rate_limits"; readonly value: RateLimit[] }
  | { readonly field: "expire_time"; readonly value: Date | null };

/** Applies changes to a key's current fields (pure); metadata grown past MAX_METADATA_BYTES is refused. */
export function applyChanges(current: ApiKeyFields, changes: readonly KeyChange[]): ApiKeyFields {
  let next: ApiKeyFields = current;
  for (const change of changes) {
    switch (change.field) {
      case "name":
        next = { ...next, name: change.value };
        break;
      case "actor_id":
        next = { ...next, actorId: change.value };
        break;
      case "scopes":
        next = { ...next, scopes: change.value };
        break;
      case "metadata":
        next = { ...next, metadata: change.value };
        break;
      case "metadata_entry":
        next = { ...next, metadata: setIn(next.metadata, change.path, change.value) };
        break;
      case "rate_limits":
        next = { ...next, rateLimits: change.value };
        break;
      case "expire_time":
        next = { ...next, expireTime: change.value };
        break;
    }
  }
  if (Buffer.byteLength(JSON.stringify(next.metadata)) > MAX_METADATA_BYTES) {
    throw new ApiKeyError("metadataTooLarge", `metadata must be at most ${MAX_METADATA_BYTES} bytes of JSON`);
  }
  return { ...next, metadata: { ...next.metadata } };
}

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/** Copy of `obj` with `path` set to `value`, or removed when `value` is undefined; creates objects on the way. */
function setIn(obj: Readonly<JsonObject>, path: readonly string[], value: unknown): JsonObject {
  const [head, ...rest] = path;
  if (head === undefined) return { ...obj };
  const out: JsonObject = { ...obj };
  if (rest.length === 0) {
    if (value === undefined) delete out[head];
    else out[head] = value;
    return out;
  }
  const child = out[head];
  if (value === undefined && !isObject(child)) return out;
  out[head] = setIn(isObject(child) ? child : {}, rest, value);
  return out;
}
