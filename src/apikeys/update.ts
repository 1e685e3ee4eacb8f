import { invalidArgument } from "../admin/errors.js";
import { type FieldUpdate, type MaskSpec, resolveUpdateMask } from "../admin/update-mask.js";
import { isObject, type JsonObject } from "../admin/validate.js";
import {
  checkMetadataSize,
  parseActorId,
  parseMetadata,
  parseName,
  parseRateLimits,
  parseScopes,
  parseTime,
} from "./fields.js";
import type { ApiKeyFields, RateLimit } from "./model.js";

/** Issue 7 point 2: what PATCH may change; naming anything else of the resource is INVALID_ARGUMENT. */
export const ISSUED_KEY_MASK: MaskSpec = {
  mutable: ["name", "scopes", "metadata", "rate_limits", "expire_time", "actor_id"],
  immutable: [
    "key_id",
    "kind",
    "secret",
    "prefix",
    "organization_id",
    "state",
    "create_time",
    "update_time",
    "revoke_time",
  ],
  maps: ["metadata"],
};

/** One typed change; `metadata_entry` addresses a nested path inside metadata (`metadata.team`). */
export type KeyChange =
  | { readonly field: "name"; readonly value: string }
  | { readonly field: "actor_id"; readonly value: string | null }
  | { readonly field: "scopes"; readonly value: string[] }
  | { readonly field: "metadata"; readonly value: JsonObject }
  | { readonly field: "metadata_entry"; readonly path: readonly string[]; readonly value: unknown }
  | { readonly field: "rate_limits"; readonly value: RateLimit[] }
  | { readonly field: "expire_time"; readonly value: Date | null };

/**
 * Spec 4.9 + AIP-134/161 on the `issued_api_key` body: resolves the mask (none = populated fields, `*` = all
 * mutable fields, listed-but-empty = cleared) and types every value. Unset values are zero values.
 */
export function parseIssuedKeyUpdate(mask: string | undefined, body: JsonObject): KeyChange[] {
  return resolveUpdateMask(mask, body, ISSUED_KEY_MASK).map(toChange);
}

function toChange({ path, value }: FieldUpdate): KeyChange {
  switch (path) {
    case "name":
      return { field: "name", value: value === undefined ? "" : parseName(value, path) };
    case "actor_id":
      return { field: "actor_id", value: parseActorId(value, path) };
    case "scopes":
      return { field: "scopes", value: parseScopes(value, path) };
    case "metadata":
      return { field: "metadata", value: parseMetadata(value, path) };
    case "rate_limits":
      return { field: "rate_limits", value: parseRateLimits(value, path) };
    case "expire_time":
      return { field: "expire_time", value: parseTime(value, path) };
    default: {
      const [top, ...rest] = path.split(".");
      if (top !== "metadata" || rest.length === 0 || rest.some((s) => s === "")) {
        throw invalidArgument(`update_mask path \`${path}\` is not a field of this resource`);
      }
      return { field: "metadata_entry", path: rest, value };
    }
  }
}

/** Applies changes to a key's current fields (pure). */
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
  return { ...next, metadata: checkMetadataSize({ ...next.metadata }) };
}

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
