import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import { collectDefaultMetrics, Registry } from "prom-client";
import { ADMIN_PREFIX, installAdminPlumbing } from "./admin/plugin.js";
import { registerEventRoutes } from "./admin/routes/events.js";
import { registerIdentityRoutes } from "./admin/routes/identities.js";
import { registerOrganizationRoutes } from "./admin/routes/organizations.js";
import { registerScimClientRoutes } from "./admin/routes/scim-clients.js";
import { registerApiKeyRoutes } from "./apikeys/routes.js";
import { ApiKeyService } from "./apikeys/service.js";
import { registerTestMappingRoute } from "./admin/routes/test-mapping.js";
import { GroupService } from "./directory/groups/service.js";
import { IdentityService } from "./directory/identities/service.js";
import { DataMapper } from "./directory/mapping/mapper.js";
import { registerWebhookEventRoutes } from "./admin/routes/webhook-events.js";
import { registerWebhookSecretRoute } from "./admin/routes/webhook-secret.js";
import type { EventSink } from "./directory/events.js";
import { validateMappingSource } from "./directory/mapping/validate.js";
import { OrganizationService } from "./directory/organizations/service.js";
import { ScimClientService } from "./directory/scim-clients/service.js";
import type { Clock } from "./platform/clock.js";
import { SecretBox } from "./platform/crypto.js";
import type { Logger } from "./platform/logger.js";
import { registerPortal } from "./portal/routes.js";
import { registerScim } from "./scim/index.js";
import { CursorCodec } from "./scim/query/cursor.js";
import { MAX_BODY_BYTES } from "./scim/limits.js";
import { type Db, pendingMigrations } from "./storage/database.js";
import { createWebhooks, type Webhooks } from "./webhooks/index.js";

export interface AppDeps {
  readonly db: Db;
  /** The same database for the hot user reads, planned generically (storage/open.ts); default: db. */
  readonly reads?: Db;
  readonly clock: Clock;
  readonly logger: Logger;
  /** ROSTER_SECRETS: the first key signs and encrypts, the others still verify and decrypt. */
  readonly secrets: readonly Buffer[];
  /** Salted hash of the admin bearer token. */
  readonly adminTokenHash: string;
  /** Base of meta.location and scim_base_url; a function because port 0 is known only once listening. */
  readonly publicUrl: () => string;
  /** Where directory changes are recorded for webhooks; default: the webhooks module's outbox sink. */
  readonly eventSink?: EventSink;
  /** The webhooks module (outbox sink, dispatcher, event log); default: one built from db, clock and secrets. */
  readonly webhooks?: Webhooks;
}

/** Registers every plugin; reads no environment and opens nothing (STYLE.md). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: MAX_BODY_BYTES,
    return503OnClosing: true,
    forceCloseConnections: "idle",
    routerOptions: { caseSensitive: false, ignoreTrailingSlash: true },
  });
  const box = new SecretBox(deps.secrets);
  const organizations = new OrganizationService(deps.db, deps.clock);
  const scimClients = new ScimClientService(deps.db, deps.clock, box);
  const webhooks = deps.webhooks ?? createWebhooks({ db: deps.db, clock: deps.clock, logger: deps.logger, box });
  const eventSink = deps.eventSink ?? webhooks.sink;
  const cursors = new CursorCodec(deps.secrets, deps.clock);
  const mapper = new DataMapper(deps.clock);
  const identities = new IdentityService(deps.db, deps.clock, eventSink, mapper, deps.reads);

  registerHealth(app, deps.db);
  registerPortal(app);
  // A SCIM write answers after its transaction committed: wake the local dispatcher (other instances poll).
  // Routing is case-insensitive, so `/SCIM/…/V2/Users` is a SCIM write too.
  app.addHook("onResponse", async (req) => {
    if (req.method !== "GET" && req.method !== "HEAD" && isScimPath(req.url)) webhooks.dispatcher.wake();
  });

  await app.register(
    async (scope) => {
      installAdminPlumbing(scope, deps.adminTokenHash, deps.logger);
      registerOrganizationRoutes(scope, organizations, (orgId) => scimClients.cached.forgetOrganization(orgId));
      registerScimClientRoutes(scope, {
        scimClients,
        publicUrl: deps.publicUrl,
        validateMapping: validateMappingSource,
      });
      registerApiKeyRoutes(scope, { apiKeys: new ApiKeyService(deps.db, deps.clock), clock: deps.clock });
      registerIdentityRoutes(scope, identities);
      registerTestMappingRoute(scope, { scimClients, mapper, validateMapping: validateMappingSource });
      registerWebhookEventRoutes(scope, {
        scimClients,
        ...webhooks,
        db: deps.db,
        clock: deps.clock,
        wake: () => webhooks.dispatcher.wake(),
      });
      registerEventRoutes(scope, { feed: webhooks.feed, organizations });
      registerWebhookSecretRoute(scope, scimClients);
    },
    { prefix: ADMIN_PREFIX },
  );

  await registerScim(app, {
    clients: scimClients.cached,
    publicUrl: deps.publicUrl,
    logger: deps.logger,
    db: deps.db,
    clock: deps.clock,
    cursors,
    identities,
    groups: new GroupService(deps.db, deps.clock, eventSink),
  });
  return app;
}

const isScimPath = (url: string): boolean => url.slice(0, 6).toLowerCase() === "/scim/";

function registerHealth(app: FastifyInstance, db: Db): void {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  app.get("/health/alive", async () => ({ status: "ok" }));
  app.get("/health/ready", async (_req, reply) => {
    try {
      const pending = await pendingMigrations(db);
      if (pending > 0) return reply.code(503).send({ status: "migrations pending", pending });
      return { status: "ok" };
    } catch {
      return reply.code(503).send({ status: "database unreachable" });
    }
  });
  app.get("/metrics", async (_req, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
}
