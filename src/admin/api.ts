import cookie from "@fastify/cookie";
import swagger from "@fastify/swagger";
import type { FastifyInstance } from "fastify";
import type { ApiKeyService } from "../apikeys/service.js";
import type { GroupService } from "../directory/groups/service.js";
import type { IdentityService } from "../directory/identities/service.js";
import type { DataMapper } from "../directory/mapping/mapper.js";
import type { OrganizationService } from "../directory/organizations/service.js";
import type { ScimClientService } from "../directory/scim-clients/service.js";
import type { ScimClient } from "../directory/scim-clients/types.js";
import type { SetupLinkService } from "../directory/setup-links/service.js";
import { installAdminObservability, type Observability } from "../observability/index.js";
import { registerObservabilityRoutes } from "./routes/observability.js";
import type { Clock } from "../platform/clock.js";
import type { Logger } from "../platform/logger.js";
import type { Webhooks } from "../webhooks/index.js";
import { ADMIN_PREFIX, installAdminPlumbing } from "./plugin.js";
import { registerApiKeyRoutes } from "./routes/api-keys.js";
import { registerDirectoryRoutes } from "./routes/directory.js";
import { registerEventRoutes } from "./routes/events.js";
import { registerIdentityRoutes } from "./routes/identities.js";
import { registerOrganizationRoutes } from "./routes/organizations.js";
import { guardJson, registerGuardRoutes } from "./routes/deprovisioning-guard.js";
import { registerScimClientRoutes } from "./routes/scim-clients.js";
import { registerTestMappingRoute } from "./routes/test-mapping.js";
import { registerWebhookEventRoutes } from "./routes/webhook-events.js";
import { registerWebhookSecretRoute } from "./routes/webhook-secret.js";
import { registerWebhookTestEventRoute } from "./routes/webhook-test-event.js";
import { ErrorBody } from "./schemas/kit.js";
import { registerSetupExchange } from "./setup-links/exchange.js";
import { registerSetupLinkRoutes } from "./setup-links/routes.js";
import { registerSetupSessionRoute } from "./setup-links/session-route.js";
import type { SetupSessionCodec } from "./setup-links/session.js";
import { registerAdminTokenRoutes } from "./tokens/routes.js";
import type { AdminTokenService } from "./tokens/service.js";
import { adminValidatorCompiler } from "./validation.js";
import type { DeprovisioningGuardService } from "../directory/deprovisioning-guard/service.js";
import type { DatabaseFaults } from "../platform/faults.js";

export interface AdminApiDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  /** Salted hash of the bootstrap admin token. */
  readonly adminTokenHash: string;
  readonly publicUrl: () => string;
  readonly adminTokens: AdminTokenService;
  readonly organizations: OrganizationService;
  readonly scimClients: ScimClientService;
  readonly apiKeys: ApiKeyService;
  readonly identities: IdentityService;
  readonly groups: GroupService;
  readonly mapper: DataMapper;
  /** Validates a data mapping (expression or URL) before it is stored; throws INVALID_ARGUMENT. */
  readonly validateMapping: (mapping: string) => Promise<void>;
  readonly webhooks: Webhooks;
  readonly observability: Observability;
  /** Tells the database's faults apart (503, 400) from the API's own errors. */
  readonly faults: DatabaseFaults;
  readonly setupLinks: SetupLinkService;
  readonly setupSessions: SetupSessionCodec;
  /** Queues a connection's `webhook.test` event in the outbox; returns its id. */
  readonly queueTestEvent: (client: ScimClient) => Promise<string>;
  /** The connections' deprovisioning guards (docs/deprovisioning.md). */
  readonly deprovisioningGuard: DeprovisioningGuardService;
}

/**
 * The admin API under /v2alpha1/admin: its plumbing (admin token, viewer role, error body, input limits), request
 * bodies validated by their schemas, every admin route, and the OpenAPI document generated from the same schemas.
 */
export async function registerAdminApi(app: FastifyInstance, deps: AdminApiDeps): Promise<void> {
  // In a context of their own: the cookie plugin's hooks (a setup link's session) run on these routes' requests
  // alone, not on every SCIM request.
  await app.register(async (admin) => {
    await admin.register(cookie);
    registerSetupExchange(admin, {
      setupLinks: deps.setupLinks,
      sessions: deps.setupSessions,
      publicUrl: deps.publicUrl,
    });
    await admin.register(async (scope) => adminScope(scope, deps), { prefix: ADMIN_PREFIX });
  });
}

/** A body schema marked `x-optional-body` (rotations) makes the request body optional in the document too. */
function optionalBodies<T extends { paths?: object }>(document: T): T {
  for (const operations of Object.values(document.paths ?? {}) as Record<string, OperationObject>[]) {
    for (const operation of Object.values(operations)) {
      const body = operation.requestBody;
      const schema = body?.content?.["application/json"]?.schema;
      if (body !== undefined && schema?.["x-optional-body"] === true) body.required = false;
    }
  }
  return document;
}

type OperationObject = {
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Record<string, unknown> }> };
};

async function adminScope(scope: FastifyInstance, deps: AdminApiDeps): Promise<void> {
  const { observability, scimClients, webhooks } = deps;
  installAdminPlumbing(scope, deps.adminTokenHash, deps.logger, deps.adminTokens, deps.faults, {
    setupLinks: deps.setupLinks,
    sessions: deps.setupSessions,
    scimClients,
  });
  installAdminObservability(scope, { ...observability, logger: deps.logger, clock: deps.clock });
  scope.setValidatorCompiler(adminValidatorCompiler);
  // Bodies go out as the handlers build them: the response schemas document them and drop nothing.
  scope.setSerializerCompiler(() => (data) => JSON.stringify(data));
  scope.addSchema(ErrorBody);
  await scope.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: { title: "Roster admin API", version: "v2alpha1" },
      components: { securitySchemes: { adminToken: { type: "http", scheme: "bearer" } } },
      security: [{ adminToken: [] }],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transformObject: (document) =>
      "openapiObject" in document ? optionalBodies(document.openapiObject) : document.swaggerObject,
  });
  scope.get("/openapi.json", { schema: { tags: ["OpenAPI"] } }, async () => scope.swagger());

  registerAdminTokenRoutes(scope, { tokens: deps.adminTokens, clock: deps.clock });
  registerSetupLinkRoutes(scope, {
    setupLinks: deps.setupLinks,
    clock: deps.clock,
    publicUrl: deps.publicUrl,
    checkWebhookUrl: webhooks.checkUrl,
  });
  registerSetupSessionRoute(scope, {
    setupLinks: deps.setupLinks,
    sessions: deps.setupSessions,
    organizations: deps.organizations,
  });
  registerOrganizationRoutes(scope, deps.organizations, (orgId) => scimClients.cached.forgetOrganization(orgId));
  registerScimClientRoutes(scope, {
    scimClients,
    publicUrl: deps.publicUrl,
    validateMapping: deps.validateMapping,
    checkWebhookUrl: webhooks.checkUrl,
    health: async (clientId) => ({
      ...(await observability.health(clientId)),
      deprovisioning_guard: guardJson(await deps.deprovisioningGuard.state(clientId)),
    }),
    guard: {
      settings: (clientId) => deps.deprovisioningGuard.state(clientId),
      configure: async (clientId, settings) => guardJson(await deps.deprovisioningGuard.configure(clientId, settings)),
    },
  });
  registerGuardRoutes(scope, { scimClients, guard: deps.deprovisioningGuard });
  registerApiKeyRoutes(scope, {
    apiKeys: deps.apiKeys,
    clock: deps.clock,
    onRateLimited: () => observability.metrics.apiKeyRateLimited(),
  });
  registerIdentityRoutes(scope, deps.identities);
  registerDirectoryRoutes(scope, { identities: deps.identities, groups: deps.groups });
  registerTestMappingRoute(scope, { scimClients, mapper: deps.mapper, validateMapping: deps.validateMapping });
  registerWebhookEventRoutes(scope, {
    scimClients,
    ...webhooks,
    clock: deps.clock,
    wake: () => webhooks.dispatcher.wake(),
  });
  registerEventRoutes(scope, { feed: webhooks.feed, organizations: deps.organizations });
  registerWebhookSecretRoute(scope, scimClients);
  registerWebhookTestEventRoute(scope, {
    scimClients,
    queue: deps.queueTestEvent,
    checkUrl: webhooks.checkUrl,
    wake: () => webhooks.dispatcher.wake(),
  });
  registerObservabilityRoutes(scope, {
    ...observability,
    clientExists: async (clientId) => (await scimClients.get(clientId)) !== undefined,
  });
}
