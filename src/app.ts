import { AsyncLocalStorage, AsyncResource } from "node:async_hooks";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
  LogController,
  type RouteOptions,
} from "fastify";
import { registerAdminApi } from "./admin/api.js";
import { SetupSessionCodec } from "./admin/setup-links/session.js";
import { AdminTokenRepo } from "./admin/tokens/repo.js";
import { AdminTokenService } from "./admin/tokens/service.js";
import { ApiKeyRepo } from "./apikeys/repo.js";
import { ApiKeyService } from "./apikeys/service.js";
import { GroupService } from "./directory/groups/service.js";
import { GroupStore } from "./directory/groups/repo-unit.js";
import { IdentityStore } from "./directory/identities/repo-store.js";
import { IdentityService } from "./directory/identities/service.js";
import { DataMapper } from "./directory/mapping/mapper.js";
import { GuardRepo } from "./directory/deprovisioning-guard/repo.js";
import { DeprovisioningGuardService } from "./directory/deprovisioning-guard/service.js";
import { afterCommit, type EventSink } from "./directory/events.js";
import { watchDeprovisioningGuard } from "./observability/deprovisioning-metrics.js";
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
import type { TlsMaterial } from "./platform/tls.js";
import type { TrustProxy } from "./platform/trust-proxy.js";
import { registerPortal } from "./portal/routes.js";
import { clientErrorHandler, frameworkErrors, installEdge } from "./edge-errors.js";
import { registerScim } from "./scim/index.js";
import { AccessTokenCodec } from "./scim/auth/access-tokens.js";
import { CursorCodec } from "./scim/query/cursor.js";
import { MAX_BODY_BYTES } from "./scim/limits.js";
import type { Db } from "./storage/database.js";
import { Readiness } from "./storage/readiness.js";
import { createWebhooks, type Webhooks } from "./webhooks/index.js";
import { queueTestEvent } from "./webhooks/test-event-repo.js";
import { sameOrigin } from "./platform/outbound/guard.js";
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
  /** ROSTER_WEBHOOK_URL_ALLOW for the default webhooks module (a given `webhooks` brings its own); default: none. */
  readonly webhookUrlAllow?: readonly string[];
  /** Serve HTTPS with this certificate (server.ts swaps it on SIGHUP with `app.server.setSecureContext`). */
  readonly tls?: TlsMaterial;
  /** ROSTER_TRUST_PROXY: whose X-Forwarded-For/-Proto/-Host are believed; default: no one's. */
  readonly trustProxy?: TrustProxy;
  /**
   * No ROSTER_PUBLIC_URL behind a trusted proxy: the base of meta.location and scim_base_url is each request's own
   * scheme and host (X-Forwarded-Proto/-Host from a trusted peer), `publicUrl()` only outside a request.
   */
  readonly publicUrlFromRequest?: boolean;
  /** What `GET /health/ready` reports in `warnings` (an unreachable or plain-HTTP public URL); default: no field. */
  readonly warnings?: () => readonly string[];
}

/** Composes the parts and registers their plugins; reads no environment and opens nothing. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.tls === undefined ? {} : { https: { cert: deps.tls.cert, key: deps.tls.key } }),
    trustProxy: trustProxyOption(deps.trustProxy),
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // Requests log through the service's logger, not a per-request child: nothing reads Fastify's request id
    // binding, and the child was an allocation on every request (0.4–0.9 µs and its garbage, of a GET's ~200 µs).
    childLoggerFactory: (logger) => logger,
    bodyLimit: MAX_BODY_BYTES,
    return503OnClosing: true,
    forceCloseConnections: "idle",
    routerOptions: { caseSensitive: false, ignoreTrailingSlash: true },
    frameworkErrors,
    clientErrorHandler,
  }) as unknown as FastifyInstance;
  const publicUrl = deps.publicUrlFromRequest === true ? requestOrigins(app, deps.publicUrl) : deps.publicUrl;
  if (deps.onRoute !== undefined) app.addHook("onRoute", deps.onRoute);
  installEdge(app, deps.logger, DATABASE_FAULTS);
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
      urlAllow: deps.webhookUrlAllow ?? [],
      refusedOrigins: () => [deps.publicUrl()],
    });
  // Whatever webhooks module is given, the admin API refuses webhook URLs that point at this service itself.
  const checkWebhookUrl = async (url: string): Promise<string | undefined> =>
    pointsAtSelf(url, deps.publicUrl()) ? "the URL points at this service itself" : webhooks.checkUrl(url);
  // A write that queued webhook deliveries wakes the local dispatcher once it committed (other instances poll).
  const deprovisioningGuard = new DeprovisioningGuardService(new GuardRepo(deps.db), deps.clock, deps.logger);
  watchDeprovisioningGuard(observability.metrics.registry, () => deprovisioningGuard.totals());
  const eventSink = afterCommit(deps.eventSink ?? webhooks.sink, (batch) => {
    if (batch.webhook) webhooks.dispatcher.wake();
    deprovisioningGuard.afterCommit(batch).catch((err: unknown) => {
      deps.logger.error({ err }, "could not check the connection's deprovisioning guard");
    });
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
  const identities = new IdentityService(new IdentityStore(deps.db, deps.reads), deps.clock, eventSink, mapper);
  const groups = new GroupService(new GroupStore(deps.db, eventSink), deps.clock);

  registerHealth(app, deps.db, deps.warnings);
  registerMetricsAndWriter(app, observability);
  registerPortal(app);

  await registerAdminApi(app, {
    clock: deps.clock,
    logger: deps.logger,
    adminTokenHash: deps.adminTokenHash,
    publicUrl,
    adminTokens: new AdminTokenService(new AdminTokenRepo(deps.db), deps.clock),
    organizations,
    scimClients,
    apiKeys: new ApiKeyService(new ApiKeyRepo(deps.db), deps.clock, eventSink),
    identities,
    groups,
    mapper,
    validateMapping,
    webhooks: { ...webhooks, checkUrl: checkWebhookUrl },
    observability,
    faults: DATABASE_FAULTS,
    setupLinks: new SetupLinkService(new SetupLinkRepo(deps.db), deps.clock, box),
    setupSessions: new SetupSessionCodec(deps.secrets, deps.clock),
    queueTestEvent: (client) => queueTestEvent(deps.db, client, deps.clock.now()),
    deprovisioningGuard,
  });

  await registerScim(app, {
    faults: DATABASE_FAULTS,
    clients: scimClients.authenticator,
    publicUrl,
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

function registerHealth(app: FastifyInstance, db: Db, warningsOf?: () => readonly string[]): void {
  const readiness = new Readiness(db);
  app.get("/health/alive", async () => ({ status: "ok" }));
  app.get("/health/ready", async (_req, reply) => {
    const { ready, ...body } = await readiness.check();
    if (!ready) return reply.code(503).send(body);
    return warningsOf === undefined ? body : { ...body, warnings: warningsOf() };
  });
}

function pointsAtSelf(url: string, publicUrl: string): boolean {
  try {
    return sameOrigin(publicUrl, new URL(url));
  } catch {
    return false;
  }
}

/** Fastify's `trustProxy`: a mutable list, and a hop count as the function proxy-addr makes of one. */
function trustProxyOption(
  trust: TrustProxy | undefined,
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (trust === undefined) return false;
  if (typeof trust === "number") return (_address, hop) => hop < trust;
  return typeof trust === "boolean" ? trust : [...trust];
}

const SCHEME = /^https?$/;
const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/**
 * The public base URL as each request sees it: its scheme and host as Fastify reads them (the trusted proxy's
 * X-Forwarded-Proto/-Host), kept for the request's whole async flow; `fallback()` outside a request or for a host
 * that is not one. The store is entered in `onRequest` and entered again in `preValidation`, since reading the
 * body continues in the socket's async context rather than the request's.
 */
function requestOrigins(app: FastifyInstance, fallback: () => string): () => string {
  const origins = new AsyncLocalStorage<string>();
  const scopes = new WeakMap<FastifyRequest, AsyncResource>();
  app.addHook("onRequest", (req, _reply, done) => {
    const scheme = req.protocol;
    const host = req.host;
    const origin = SCHEME.test(scheme) && HOST.test(host) ? `${scheme}://${host}` : fallback();
    origins.run(origin, () => {
      scopes.set(req, new AsyncResource("roster-request-origin"));
      done();
    });
  });
  app.addHook("preValidation", (req, _reply, done) => {
    const scope = scopes.get(req);
    if (scope === undefined) done();
    else scope.runInAsyncScope(done);
  });
  return () => origins.getStore() ?? fallback();
}
