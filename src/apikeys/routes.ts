import type { FastifyInstance } from "fastify";
import { invalidArgument, notFound } from "../admin/errors.js";
import { first, pageOf, parsePageRequest, requireUuid } from "../admin/paging.js";
import { isObject, requireObject } from "../admin/validate.js";
import type { Clock } from "../platform/clock.js";
import { isUuid } from "../platform/ids.js";
import { toAdminError } from "../admin/domain-errors.js";
import { batchFailure } from "./batch.js";
import { parseBatchRequest, parseDuration, parseKeyFields } from "./fields.js";
import { apiKeyJson, importResultsJson, verifyJson, withSecretJson } from "./json.js";
import { type ApiKeyKind, MAX_GRACE_PERIOD_SECONDS } from "./model.js";
import type { ListFilter } from "./repo.js";
import type { ApiKeyService } from "./service.js";
import { parseIssuedKeyUpdate } from "./update.js";

export interface ApiKeyRouteDeps {
  readonly apiKeys: ApiKeyService;
  readonly clock: Clock;
  /** Told of each verification refused by a rate limit (a metric). */
  readonly onRateLimited?: () => void;
}

type KeyParams = { Params: { keyId: string } };

/**
 * DESIGN.md "Admin API surface" for API keys, inside the admin scope (admin token, admin error body).
 * Colons of custom methods are escaped for Fastify's router (`::`); after a parameter the parameter needs a
 * regex that stops at `:`, or find-my-way reads `keyId::rotate` as the parameter's name.
 */
export function registerApiKeyRoutes(scope: FastifyInstance, deps: ApiKeyRouteDeps): void {
  const { apiKeys, clock } = deps;
  const keyIdOf = (kind: ApiKeyKind, raw: string): string => {
    // A malformed id names no key: 404, as for any other missing key.
    if (!isUuid(raw)) throw notFound(`${kind} API key ${raw} does not exist`);
    return raw.toLowerCase();
  };

  scope.post("/issuedApiKeys", async (req, reply) => {
    const body = requireObject(req.body);
    const org = body.organization_id;
    const organizationId =
      org === undefined || org === null || org === ""
        ? null
        : requireUuid(typeof org === "string" ? org : "", "organization_id");
    const created = await apiKeys.createIssued(organizationId, parseKeyFields(body, "", false));
    reply.code(201);
    return withSecretJson(created, clock.now());
  });

  scope.get("/issuedApiKeys", async (req) => listKeys("issued", req.query as Record<string, unknown>));

  scope.get<KeyParams>("/issuedApiKeys/:keyId", async (req) =>
    apiKeyJson(await apiKeys.get("issued", keyIdOf("issued", req.params.keyId)), clock.now()),
  );

  /** Spec 4.9: `{issued_api_key: {...}}` and `?update_mask=`; the secret never changes here. */
  scope.patch<KeyParams>("/issuedApiKeys/:keyId", async (req) => {
    const body = requireObject(req.body);
    if (!isObject(body.issued_api_key)) throw invalidArgument("issued_api_key must be a JSON object");
    const resource = body.issued_api_key;
    if (resource.key_id !== undefined && resource.key_id !== null && resource.key_id !== req.params.keyId) {
      throw invalidArgument("issued_api_key.key_id differs from the key_id in the path");
    }
    const changes = parseIssuedKeyUpdate(maskOf((req.query as Record<string, unknown>).update_mask), resource);
    const updated = await apiKeys.update(keyIdOf("issued", req.params.keyId), changes);
    return apiKeyJson(updated, clock.now());
  });

  scope.delete<KeyParams>("/issuedApiKeys/:keyId", async (req) =>
    apiKeyJson(await apiKeys.revoke("issued", keyIdOf("issued", req.params.keyId)), clock.now()),
  );

  /** `{grace_period?: "3600s" | 3600}`: how long the previous secret keeps verifying (default 0, at most 24 h). */
  scope.post<KeyParams>("/issuedApiKeys/:keyId([^:/]+)::rotate", async (req) => {
    const body = req.body === undefined || req.body === null ? {} : requireObject(req.body);
    const grace =
      body.grace_period === undefined || body.grace_period === null
        ? 0
        : parseDuration(body.grace_period, "grace_period", MAX_GRACE_PERIOD_SECONDS);
    const rotated = await apiKeys.rotate(keyIdOf("issued", req.params.keyId), grace);
    return withSecretJson(rotated, clock.now());
  });

  scope.post("/importedApiKeys::batchCreate", async (req) => {
    const outcomes = await apiKeys.importBatch(parseBatchRequest(requireObject(req.body)));
    const body = importResultsJson(outcomes, clock.now());
    const failure = batchFailure(outcomes);
    if (failure !== undefined)
      throw toAdminError(failure, [{ "@type": "BatchCreateImportedApiKeysResponse", ...body }]);
    return body;
  });

  scope.get("/importedApiKeys", async (req) => listKeys("imported", req.query as Record<string, unknown>));

  scope.get<KeyParams>("/importedApiKeys/:keyId", async (req) =>
    apiKeyJson(await apiKeys.get("imported", keyIdOf("imported", req.params.keyId)), clock.now()),
  );

  scope.delete<KeyParams>("/importedApiKeys/:keyId", async (req) =>
    apiKeyJson(await apiKeys.revoke("imported", keyIdOf("imported", req.params.keyId)), clock.now()),
  );

  /** Issue 7 point 5: always 200 for a well-formed request; the outcome is in the body. */
  scope.post("/apiKeys::verify", { config: { viewerAllowed: true } }, async (req) => {
    const key = requireObject(req.body).key;
    if (typeof key !== "string" || key === "") throw invalidArgument("key must be a non-empty string");
    const result = await apiKeys.verify(key);
    if (!result.valid && result.reason === "RATE_LIMITED") deps.onRateLimited?.();
    return verifyJson(result);
  });

  async function listKeys(kind: ApiKeyKind, query: Record<string, unknown>) {
    const page = parsePageRequest(query);
    const org = first(query.organization_id);
    const actor = first(query.actor_id);
    const showRevoked = first(query.show_revoked);
    if (showRevoked !== undefined && showRevoked !== "true" && showRevoked !== "false") {
      throw invalidArgument("show_revoked must be true or false");
    }
    const filter: ListFilter = {
      organizationId: org === undefined || org === "" ? undefined : requireUuid(org, "organization_id"),
      actorId: actor === undefined || actor === "" ? undefined : actor,
      showRevoked: showRevoked === "true",
    };
    const after = page.after === undefined ? undefined : requireUuid(page.after, "page_token");
    const rows = await apiKeys.list(kind, filter, after, page.pageSize + 1);
    const { items, next_page_token } = pageOf(rows, page.pageSize, (k) => k.keyId);
    const now = clock.now();
    return {
      [kind === "issued" ? "issued_api_keys" : "imported_api_keys"]: items.map((k) => apiKeyJson(k, now)),
      next_page_token,
    };
  }
}

/** `update_mask=a,b` or, as some gRPC-transcoding clients send it, `update_mask=a&update_mask=b`. */
function maskOf(raw: unknown): string | undefined {
  if (Array.isArray(raw)) return raw.filter((v) => typeof v === "string").join(",");
  return first(raw);
}
