import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController, type RouteOptions } from "fastify";
import { registerAdminApi } from "./admin/api.js";
import { SetupSessionCodec } from "./admin/setup-links/session.js";
import { AdminTokenRepo } from "./admin/tokens/repo.js";
import { AdminTokenService } from "./admin/tokens/service.js";
import { ApiKeyRepo } from "./apikeys/repo.js";
import { ApiKeyService } from "./apikeys/service.js";
import { GroupService } from "./directory/groups/service.js";
import { IdentityService } from "./directory/identities/service.js";
import { DataMapper } from "./directory/mapping/mapper.js";
import { afterCommit, type EventSink } from "./directory/events.js";
import { MappingEvaluator } from "./directory/mapping/evaluator.js";
import { type MappingSourcePolicy, NO_MAPPING_SOURCES } from "./directory/mapping/policy.js";
import { MappingSources } from "./directory/mapping/source.js";
import { mappingValidator } from "./directory/mapping/validate.js";
import { OrganizationRepo } from "./directory/organizations/repo.js";
import { OrganizationService } from "./directory/organizations/service.js";
import {
  createObservability,
  installRequestTracing,
  type Observability,
  registerMetricsAndWriter,
  traceMappings,
} from "./observability/index.js";
import { ScimClientRepo } from "./directory/scim-clients/repo.js";
import { ScimClientService } from "./directory/scim-clients/service.js";
import { SetupLinkRepo } from "./directory/setup-links/repo.js";
import { SetupLinkService } from "./directory/setup-links/service.js";
import type { Clock } from "./platform/clock.js";
import { SecretBox } from "./platform/crypto.js";
import type { Logger } from "./platform/logger.js";
import { registerPortal } from "./portal/routes.js";
import { clientErrorHandler, frameworkErrors, installEdge } from "./edge-errors.js";
import { registerScim } from "./scim/index.js";
import { AccessTokenCodec } from "./scim/auth/access-tokens.js";
import { CursorCodec } from "./scim/query/cursor.js";
import { MAX_BODY_BYTES } from "./scim/limits.js";
import { type Db, pendingMigrations } from "./storage/database.js";
import { createWebhooks, type Webhooks } from "./webhooks/index.js";
import { queueTestEvent } from "./webhooks/test-event-repo.js";
import { DATABASE_FAULTS } from "./storage/errors.js";

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
  /** Told of every route as it is registered (tests enumerate the admin routes with it). */
  readonly onRoute?: (route: RouteOptions) => void;
  /** Metrics, the SCIM request log and the audit trail; default: one built from db, clock and logger. */
  readonly observability?: Observability;
  /** Where data mapping scripts may be read from (ROSTER_MAPPING_DIR, ROSTER_MAPPING_URL_ALLOW); default: nowhere. */
  readonly mappingSources?: MappingSourcePolicy;
}

/** Composes the parts and registers their plugins; reads no environment and opens nothing. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: MAX_BODY_BYTES,
    return503OnClosing: true,
    forceCloseConnections: "idle",
    routerOptions: { caseSensitive: false, ignoreTrailingSlash: true },
    frameworkErrors,
    clientErrorHandler,
  });
  if (deps.onRoute !== undefined) app.addHook("onRoute", deps.onRoute);
  installEdge(app, deps.logger);
  const box = new SecretBox(deps.secrets);
  const organizations = new OrganizationService(new OrganizationRepo(deps.db), deps.clock);
  const observability =
    deps.observability ?? createObservability({ db: deps.db, clock: deps.clock, logger: deps.logger });
  const webhooks =
    deps.webhooks ??
    createWebhooks({
      db: deps.db,
      clock: deps.clock,
      logger: deps.logger,
      box,
      wrapSender: observability.wrapSender,
    });
  // A write that queued webhook deliveries wakes the local dispatcher once it committed (other instances poll).
  const eventSink = afterCommit(deps.eventSink ?? webhooks.sink, (batch) => {
    if (batch.webhook) webhooks.dispatcher.wake();
  });
  const scimClients = new ScimClientService(new ScimClientRepo(deps.db), deps.clock, box, eventSink);
  const cursors = new CursorCodec(deps.secrets, deps.clock);
  const tokens = new AccessTokenCodec(deps.secrets, deps.clock);
  const sources = new MappingSources(deps.mappingSources ?? NO_MAPPING_SOURCES);
  const mapper = new DataMapper(deps.clock, sources, new MappingEvaluator());
  const validateMapping = mappingValidator(sources);
  app.addHook("onClose", () => mapper.close());
  if (observability.tracer !== undefined) {
    installRequestTracing(app, observability.tracer);
    traceMappings(mapper, observability.tracer);
  }
  const identities = new IdentityService(deps.db, deps.clock, eventSink, mapper, deps.reads);
  const groups = new GroupService(deps.db, deps.clock, eventSink);

  registerHealth(app, deps.db);
  registerMetricsAndWriter(app, observability);
  registerPortal(app);

  await registerAdminApi(app, {
    clock: deps.clock,
    logger: deps.logger,
    adminTokenHash: deps.adminTokenHash,
    publicUrl: deps.publicUrl,
    adminTokens: new AdminTokenService(new AdminTokenRepo(deps.db), deps.clock),
    organizations,
    scimClients,
    apiKeys: new ApiKeyService(new ApiKeyRepo(deps.db), deps.clock),
    identities,
    groups,
    mapper,
    validateMapping,
    webhooks,
    observability,
    faults: DATABASE_FAULTS,
    setupLinks: new SetupLinkService(new SetupLinkRepo(deps.db), deps.clock),
    setupSessions: new SetupSessionCodec(deps.secrets, deps.clock),
    queueTestEvent: (client) => queueTestEvent(deps.db, client, deps.clock.now()),
  });

  await registerScim(app, {
    faults: DATABASE_FAULTS,
    clients: scimClients.authenticator,
    publicUrl: deps.publicUrl,
    logger: deps.logger,
    clock: deps.clock,
    cursors,
    tokens,
    identities,
    groups,
    observability,
  });
  return app;
}

function registerHealth(app: FastifyInstance, db: Db): void {
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
}
