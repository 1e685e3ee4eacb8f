import { invalidArgument } from "../admin/errors.js";
import { type ApiKeyFields, MAX_METADATA_BYTES, type RateLimit } from "./model.js";

type JsonObject = Record<string, unknown>;
const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/** Metadata is stored whole; its size is bounded after every change, whichever way it was made. */
export function checkMetadataSize(v: JsonObject, field = "metadata"): JsonObject {
  if (Buffer.byteLength(JSON.stringify(v)) > MAX_METADATA_BYTES) {
    throw invalidArgument(`${field} must be at most ${MAX_METADATA_BYTES} bytes of JSON`);
  }
  return v;
}

/** One typed change; `metadata_entry` addresses a nested path inside metadata (`metadata.team`). */
export type KeyChange =
  | { readonly field: "name"; readonly value: string }
  | { readonly field: "actor_id"; readonly value: string | null }
  | { readonly field: "scopes"; readonly value: string[] }
  | { readonly field: "metadata"; readonly value: JsonObject }
  | { readonly field: "metadata_entry"; readonly path: readonly string[]; readonly value: unknown }
  | { readonly field: "rate_limits"; readonly value: RateLimit[] }
  | { readonly field: "expire_time"; readonly value: Date | null };

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
