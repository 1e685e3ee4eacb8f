import type { KeyChange } from "../../apikeys/model.js";
import type { RateLimitBody } from "../schemas/api-keys.js";
import type { Static } from "@sinclair/typebox";
import { invalidArgument } from "../errors.js";
import { type FieldUpdate, type MaskSpec, resolveUpdateMask } from "../update-mask.js";
import { parseMetadata, parseRateLimits, parseScopes, parseTime } from "./api-keys-fields.js";

/** What PATCH may change; naming anything else of the resource is INVALID_ARGUMENT. */
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
 * AIP-134/161 on the `issued_api_key` body (its types checked by the route's schema): resolves the mask
 * (none = populated fields, `*` = all mutable fields, listed-but-empty = cleared) into typed changes. Unset values
 * are zero values.
 */
export function parseIssuedKeyUpdate(mask: string | undefined, body: Record<string, unknown>): KeyChange[] {
  return resolveUpdateMask(mask, body, ISSUED_KEY_MASK).map(toChange);
}

function toChange({ path, value }: FieldUpdate): KeyChange {
  switch (path) {
    case "name":
      return { field: "name", value: value === undefined ? "" : (value as string) };
    case "actor_id":
      return { field: "actor_id", value: value === undefined ? null : (value as string) };
    case "scopes":
      return { field: "scopes", value: parseScopes(value as string[] | undefined) };
    case "metadata":
      return { field: "metadata", value: parseMetadata(value as Record<string, unknown> | undefined, path) };
    case "rate_limits":
      return { field: "rate_limits", value: parseRateLimits(value as Static<typeof RateLimitBody>[], path) };
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
