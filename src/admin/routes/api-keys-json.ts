import type { JsonObject } from "../json.js";
import { formatDuration } from "./api-keys-fields.js";
import { ACTOR_INACTIVE, type ApiKey, stateOf } from "../../apikeys/model.js";
import type { RateLimitStatus } from "../../apikeys/rate-limit.js";
import type { ImportOutcome, VerifyResult, WithSecret } from "../../apikeys/service.js";

/** snake_case JSON of a key; never a secret or raw key (only the one-time `secret` of withSecretJson). */
export function apiKeyJson(key: ApiKey, now: Date): JsonObject {
  const state = stateOf(key, now);
  return {
    key_id: key.keyId,
    ...(key.kind === "issued" ? { prefix: key.prefix } : {}),
    name: key.name,
    organization_id: key.organizationId,
    actor_id: key.actorId,
    scopes: key.scopes,
    metadata: key.metadata,
    rate_limits: key.rateLimits.map((r) => ({ name: r.name, limit: r.limit, period: formatDuration(r.periodSeconds) })),
    expire_time: key.expireTime?.toISOString() ?? null,
    state,
    ...(state === "SUSPENDED" ? { suspend_reason: ACTOR_INACTIVE } : {}),
    revoke_time: key.revokeTime?.toISOString() ?? null,
    revoke_reason: key.revokeReason,
    create_time: key.createTime.toISOString(),
    update_time: key.updateTime.toISOString(),
  };
}

export function withSecretJson(result: WithSecret, now: Date): JsonObject {
  return {
    ...apiKeyJson(result.key, now),
    secret: result.secret,
    ...(result.previousSecretExpireTime === undefined
      ? {}
      : { previous_secret_expire_time: result.previousSecretExpireTime.toISOString() }),
  };
}

export function importResultsJson(outcomes: readonly ImportOutcome[], now: Date): JsonObject {
  const results = outcomes.map((o, index) =>
    "key" in o ? { index, imported_api_key: apiKeyJson(o.key, now) } : { index, error: o.error },
  );
  const successCount = outcomes.filter((o) => "key" in o).length;
  return { results, success_count: successCount, failure_count: outcomes.length - successCount };
}

const rateLimitJson = (s: RateLimitStatus) => ({
  limit: s.limit,
  remaining: s.remaining,
  reset_time: s.resetTime.toISOString(),
});

export function verifyJson(result: VerifyResult): JsonObject {
  if (!result.valid) {
    if (result.reason === "NOT_FOUND") return { valid: false, reason: result.reason };
    return {
      valid: false,
      reason: result.reason,
      key_id: result.key.keyId,
      ...(result.reason === "REVOKED" ? { revoke_reason: result.key.revokeReason } : {}),
      ...(result.rateLimit === undefined ? {} : { rate_limit: rateLimitJson(result.rateLimit) }),
    };
  }
  const { key } = result;
  return {
    valid: true,
    key_id: key.keyId,
    kind: key.kind,
    name: key.name,
    organization_id: key.organizationId,
    actor_id: key.actorId,
    scopes: key.scopes,
    metadata: key.metadata,
    expire_time: key.expireTime?.toISOString() ?? null,
    ...(result.rateLimit === undefined ? {} : { rate_limit: rateLimitJson(result.rateLimit) }),
  };
}
