import type { Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { type ApiKeyKind, MAX_GRACE_PERIOD_SECONDS } from "../../apikeys/model.js";
import { batchFailure } from "../../apikeys/batch.js";
import type { ListFilter } from "../../apikeys/repo.js";
import type { ApiKeyService } from "../../apikeys/service.js";
import type { Clock } from "../../platform/clock.js";
import { toAdminError } from "../domain-errors.js";
import { invalidArgument } from "../errors.js";
import { optionalUuid, pageOf, parsePageRequest, pathUuid, requireUuid } from "../paging.js";
import {
  ApiKeyJson,
  ApiKeyWithSecretJson,
  CreateIssuedKeyBody,
  ImportBatchBody,
  ImportBatchEnvelope,
  ImportResultsJson,
  KeyParams,
  ListKeysQuery,
  RotateBody,
  UpdateIssuedKeyBody,
  UpdateKeyQuery,
  VerifyBody,
  VerifyJson,
} from "../schemas/api-keys.js";
import { errors, Page } from "../schemas/kit.js";
import { adminValidatorCompiler } from "../validation.js";
import { parseBatchRequest } from "./api-keys-import.js";
import { keyFieldsOf, parseDuration } from "./api-keys-fields.js";
import { apiKeyJson, importResultsJson, verifyJson, withSecretJson } from "./api-keys-json.js";
import { parseIssuedKeyUpdate } from "./api-keys-update.js";

export interface ApiKeyRouteDeps {
  readonly apiKeys: ApiKeyService;
  readonly clock: Clock;
  /** Told of each verification refused by a rate limit (a metric). */
  readonly onRateLimited?: () => void;
}

type ByKey = { Params: Static<typeof KeyParams> };
const tags = ["API keys"];
const one = (response: object = ApiKeyJson) => ({ tags, params: KeyParams, response: { 200: response, ...errors } });
const listSchema = (key: string) => ({
  tags,
  querystring: ListKeysQuery,
  response: { 200: Page(key, ApiKeyJson), ...errors },
});

/**
 * Issued and imported API keys and their verification (docs/api-keys.md). Colons of custom methods are escaped for
 * Fastify's router (`::`); after a parameter the parameter needs a regex that stops at `:`, or find-my-way reads
 * `keyId::rotate` as the parameter's name.
 */
export function registerApiKeyRoutes(scope: FastifyInstance, deps: ApiKeyRouteDeps): void {
  const { apiKeys, clock } = deps;
  const keyIdOf = (kind: ApiKeyKind, raw: string): string => pathUuid(raw, `${kind} API key`);
  // Both kinds of key are listed, read and revoked alike, at /issuedApiKeys and /importedApiKeys.
  const listAndRead = (kind: ApiKeyKind) => {
    scope.get<{ Querystring: Static<typeof ListKeysQuery> }>(
      `/${kind}ApiKeys`,
      { schema: listSchema(`${kind}_api_keys`) },
      async (req) => listKeys(kind, req.query),
    );
    scope.get<ByKey>(`/${kind}ApiKeys/:keyId`, { schema: one() }, async (req) =>
      apiKeyJson(await apiKeys.get(kind, keyIdOf(kind, req.params.keyId)), clock.now()),
    );
  };
  const revocation = (kind: ApiKeyKind) =>
    scope.delete<ByKey>(`/${kind}ApiKeys/:keyId`, { schema: one() }, async (req) =>
      apiKeyJson(await apiKeys.revoke(kind, keyIdOf(kind, req.params.keyId)), clock.now()),
    );

  scope.post<{ Body: Static<typeof CreateIssuedKeyBody> }>(
    "/issuedApiKeys",
    { schema: { tags, body: CreateIssuedKeyBody, response: { 201: ApiKeyWithSecretJson, ...errors } } },
    async (req, reply) => {
      const org = req.body.organization_id;
      const organizationId = org === undefined || org === null || org === "" ? null : org.toLowerCase();
      const created = await apiKeys.createIssued(organizationId, keyFieldsOf(req.body, ""));
      reply.code(201);
      return withSecretJson(created, clock.now());
    },
  );

  listAndRead("issued");

  /** PATCH of an issued key: `{issued_api_key: {...}}` and `?update_mask=`; the secret never changes here. */
  scope.patch<ByKey & { Body: Static<typeof UpdateIssuedKeyBody>; Querystring: Static<typeof UpdateKeyQuery> }>(
    "/issuedApiKeys/:keyId",
    { schema: { ...one(), body: UpdateIssuedKeyBody, querystring: UpdateKeyQuery } },
    async (req) => {
      const resource = req.body.issued_api_key;
      if (resource.key_id !== undefined && resource.key_id !== null && resource.key_id !== req.params.keyId) {
        throw invalidArgument("issued_api_key.key_id differs from the key_id in the path");
      }
      const changes = parseIssuedKeyUpdate(maskOf(req.query.update_mask), resource);
      const updated = await apiKeys.update(keyIdOf("issued", req.params.keyId), changes);
      return apiKeyJson(updated, clock.now());
    },
  );

  revocation("issued");

  /** `{grace_period?: "3600s" | 3600}`: how long the previous secret keeps verifying (default 0, at most 24 h). */
  scope.post<ByKey & { Body: Static<typeof RotateBody> | null }>(
    "/issuedApiKeys/:keyId([^:/]+)::rotate",
    { schema: { ...one(ApiKeyWithSecretJson), body: RotateBody } },
    async (req) => {
      const period = req.body?.grace_period;
      const grace =
        period === undefined || period === null ? 0 : parseDuration(period, "grace_period", MAX_GRACE_PERIOD_SECONDS);
      const rotated = await apiKeys.rotate(keyIdOf("issued", req.params.keyId), grace);
      return withSecretJson(rotated, clock.now());
    },
  );

  scope.post<{ Body: Static<typeof ImportBatchEnvelope> }>(
    "/importedApiKeys::batchCreate",
    {
      schema: { tags, body: ImportBatchBody, response: { 200: ImportResultsJson, ...errors } },
      // Items are validated one by one in the handler: a bad item is its own result, not a 400 for the batch.
      validatorCompiler: (route) =>
        adminValidatorCompiler(route.httpPart === "body" ? { ...route, schema: ImportBatchEnvelope } : route),
    },
    async (req) => {
      const outcomes = await apiKeys.importBatch(parseBatchRequest(req.body.requests));
      const body = importResultsJson(outcomes, clock.now());
      const failure = batchFailure(outcomes);
      if (failure !== undefined) {
        throw toAdminError(failure, [{ "@type": "BatchCreateImportedApiKeysResponse", ...body }]);
      }
      return body;
    },
  );

  listAndRead("imported");

  revocation("imported");

  /** Always 200 for a well-formed request; the outcome is in the body. */
  scope.post<{ Body: Static<typeof VerifyBody> }>(
    "/apiKeys::verify",
    { config: { viewerAllowed: true }, schema: { tags, body: VerifyBody, response: { 200: VerifyJson, ...errors } } },
    async (req) => {
      const result = await apiKeys.verify(req.body.key);
      if (!result.valid && result.reason === "RATE_LIMITED") deps.onRateLimited?.();
      return verifyJson(result);
    },
  );

  async function listKeys(kind: ApiKeyKind, query: Static<typeof ListKeysQuery>) {
    const page = parsePageRequest(query);
    const { organization_id: org, actor_id: actor, show_revoked: showRevoked } = query;
    if (showRevoked !== undefined && showRevoked !== "true" && showRevoked !== "false") {
      throw invalidArgument("show_revoked must be true or false");
    }
    const filter: ListFilter = {
      organizationId: optionalUuid(org, "organization_id"),
      actorId: actor === undefined || actor === "" ? undefined : actor,
      showRevoked: showRevoked === "true",
    };
    const after = page.after === undefined ? undefined : requireUuid(page.after, "page_token");
    const rows = await apiKeys.list(kind, filter, after, page.pageSize + 1);
    const { items, next_page_token } = pageOf(rows, page.pageSize, (k) => k.keyId);
    const now = clock.now();
    return {
      [`${kind}_api_keys`]: items.map((k) => apiKeyJson(k, now)),
      next_page_token,
    };
  }
}

/** `update_mask=a,b` or, as some gRPC-transcoding clients send it, `update_mask=a&update_mask=b`. */
const maskOf = (raw: string | string[] | undefined): string | undefined => (Array.isArray(raw) ? raw.join(",") : raw);
