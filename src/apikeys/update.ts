import { invalidArgument } from "../admin/errors.js";
import { type FieldUpdate, type MaskSpec, resolveUpdateMask } from "../admin/update-mask.js";
import type { JsonObject } from "../admin/validate.js";
import { parseActorId, parseMetadata, parseName, parseRateLimits, parseScopes, parseTime } from "./fields.js";
import type { KeyChange } from "./model.js";

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
