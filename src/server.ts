import "dotenv/config";
import type { Server as TlsServer } from "node:tls";
import { buildApp } from "./app.js";
import { type Config, ConfigError, describeConfig, loadConfig } from "./config.js";
import { systemClock } from "./platform/clock.js";
import { hashSecret, SecretBox, verifySecret } from "./platform/crypto.js";
import { randomToken } from "./platform/ids.js";
import { createObservability, startTracing, type Tracing } from "./observability/index.js";
import { createLogger, type Logger } from "./platform/logger.js";
import type { Db } from "./storage/database.js";
import { openStorage, type Storage } from "./storage/open.js";
import { getSetting, putSettingIfAbsent } from "./storage/settings.js";
import { resolveSecrets } from "./platform/secrets.js";
import { publicUrlWarnings } from "./platform/public-url.js";
import { demotableLogger } from "./platform/quiet-logger.js";
import { readTls, type TlsMaterial } from "./platform/tls.js";
import { catchStopSignals, type StopSignals } from "./platform/stop-signals.js";
import { createWebhooks } from "./webhooks/index.js";
import { resealWebhookSecrets } from "./directory/scim-clients/reseal.js";
import { RetiredWebhookRepo } from "./directory/scim-clients/retired-repo.js";
import { ScimClientRepo } from "./directory/scim-clients/repo.js";
import { SetupLinkRepo } from "./directory/setup-links/repo.js";

const ADMIN_TOKEN_SETTING = "admin_token_hash";

/** The only entry point: loadConfig → openStorage (+ migrate) → buildApp → listen; SIGTERM/SIGINT → close. */
async function main(): Promise<void> {
  const startedAt = Date.now();
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`roster: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
  const logger = createLogger(config.logLevel, { format: config.logFormat });
  const signals = catchStopSignals();
  logger.info({ config: describeConfig(config) }, "starting Roster");
  let tls: TlsMaterial | undefined;
  if (config.tls !== undefined) {
    try {
      tls = await readTls(config.tls);
    } catch (e) {
      process.stderr.write(`roster: ROSTER_TLS_CERT/ROSTER_TLS_KEY: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(2);
    }
  }
  // The database and the dispatcher log through this one: see shutdown below.
  const quiet = demotableLogger(logger);

  // Before any request or statement: spans need the provider registered.
  const tracing = config.tracing ? startTracing() : undefined;
  // A stop signal during start-up: what this start opened stops too, and nothing listens.
  const stopBeforeReady = async (storage: Storage | undefined): Promise<never> => {
    // Ctrl-C reaches the embedded PostgreSQL in the same instant: its connections breaking is the expected end.
    if (config.database.kind === "embedded") quiet.demoteWarnings();
    logger.info({ signal: signals.received }, "stopping: the signal came before start-up finished");
    if (storage !== undefined) {
      storage.prepareToStop();
      await storage.close().catch(() => {});
    }
    await tracing?.shutdown();
    process.exit(0);
  };
  let storage: Storage;
  try {
    storage = await openStorage(config, quiet.logger, {
      // Never a half-alive server: without its database Roster exits, and its supervisor (or the operator) restarts
      // it. After a stop signal (Ctrl-C stops the embedded PostgreSQL as well) that end is the stop asked for.
      onEmbeddedGone: (e) => {
        if (signals.received !== undefined) return void stopBeforeReady(undefined);
        logger.fatal({ err: e.message }, "embedded PostgreSQL is gone and could not be restarted; exiting");
        process.stderr.write(`roster: embedded PostgreSQL is gone and could not be restarted: ${e.message}\n`);
        process.exit(1);
      },
    });
  } catch (e) {
    if (signals.received !== undefined) return stopBeforeReady(undefined);
    throw e;
  }
  if (signals.received !== undefined) return stopBeforeReady(storage);
  try {
    await serve(config, { logger, quiet }, storage, { startedAt, tls, signals }, tracing);
  } catch (e) {
    // Never leave an embedded PostgreSQL behind when start-up fails half-way.
    await storage.close().catch(() => {});
    throw e;
  }
}

async function serve(
  config: Config,
  loggers: { logger: Logger; quiet: ReturnType<typeof demotableLogger> },
  storage: Storage,
  start: { startedAt: number; tls: TlsMaterial | undefined; signals: StopSignals },
  tracing: Tracing | undefined,
): Promise<void> {
  const { logger, quiet } = loggers;
  const { startedAt, tls, signals } = start;
  const scheme = tls === undefined ? "http" : "https";
  const inMemory = config.database.kind === "embedded" && !config.database.persistent;
  const secrets = await resolveSecrets(config.secrets, inMemory ? "memory" : { dataDir: config.dataDir });
  const admin = await adminTokenHash(storage.db, config.adminToken);
  let publicUrl = config.publicUrl ?? `${scheme}://${config.host}:${config.port}`;
  // Behind a trusted proxy without ROSTER_PUBLIC_URL, each request's forwarded scheme and host make the base URL.
  const publicUrlFromRequest = config.publicUrl === undefined && config.trustProxy !== false;
  let warnings: readonly string[] = [];
  // The request log's writer and its partition upkeep run in the background: their lines are demoted at shutdown.
  const observability = createObservability({
    db: storage.db,
    writerDb: storage.bookkeeping,
    clock: systemClock,
    logger: quiet.logger,
    retentionDays: config.requestLogRetentionDays,
    pools: storage.pools,
    ...(tracing === undefined ? {} : { tracer: tracing.tracer }),
  });
  const webhooks = createWebhooks({
    db: storage.db,
    bookkeepingDb: storage.bookkeeping,
    clock: systemClock,
    logger: quiet.logger,
    box: new SecretBox(secrets),
    timeoutMs: config.webhookTimeoutMs,
    retentionDays: config.webhookLogRetentionDays,
    wrapSender: observability.wrapSender,
    heartbeatMs: config.webhookHeartbeatMs,
    eventRetentionDays: config.eventRetentionDays,
    urlAllow: config.webhookUrlAllow,
    refusedOrigins: () => [publicUrl],
  });
  const app = await buildApp({
    db: storage.db,
    reads: storage.reads,
    clock: systemClock,
    logger,
    secrets,
    adminTokenHash: admin.hash,
    publicUrl: () => publicUrl,
    webhooks,
    observability,
    mappingSources: { dir: config.mappingDir, urlAllow: config.mappingUrlAllow },
    ...(tls === undefined ? {} : { tls }),
    trustProxy: config.trustProxy,
    publicUrlFromRequest,
    warnings: () => warnings,
  });

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    storage.prepareToStop();
    // Ctrl-C reaches the embedded PostgreSQL in the same instant: its connections breaking now is the expected end.
    if (storage.engine === "embedded") quiet.demoteWarnings();
    logger.info({ signal }, "shutting down: no new requests, finishing in-flight ones");
    try {
      await app.close();
      // Stop claiming webhook events; deliveries under way finish and are recorded.
      await webhooks.dispatcher.stop();
      await storage.close();
      const traceError = await tracing?.shutdown();
      if (traceError !== undefined) logger.warn({ err: traceError }, "the last traces could not be exported");
      logger.debug("stopped");
      process.exit(0);
    } catch (e) {
      logger.error({ err: e }, "unclean shutdown");
      process.exit(1);
    }
  };
  signals.onStop((signal) => void shutdown(signal));
  // A signal caught while the app was being built has started the shutdown: nothing is to listen.
  if (closing) return;
  watchParent(() => void shutdown("parent exited"));
  if (config.tls !== undefined) {
    const files = config.tls;
    // SIGHUP: the renewed certificate for new handshakes; open connections keep theirs and are not dropped.
    process.on("SIGHUP", () => {
      readTls(files).then(
        (renewed) => {
          (app.server as unknown as TlsServer).setSecureContext(renewed);
          logger.info({ cert: files.certFile }, "TLS certificate reloaded");
        },
        (e: unknown) =>
          logger.error(
            { err: e instanceof Error ? e.message : String(e), cert: files.certFile },
            "TLS certificate reload failed; still serving the previous one",
          ),
      );
    });
  }

  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === "object" && address !== null ? address.port : config.port;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  if (config.publicUrl === undefined) publicUrl = `${scheme}://${host}:${port}`;
  warnings = publicUrlFromRequest ? [] : publicUrlWarnings(publicUrl);
  if (warnings.length > 0) {
    logger.warn(
      { warnings, publicUrl },
      "an IdP cannot use the SCIM base URL Roster hands out (set ROSTER_PUBLIC_URL)",
    );
  }
  webhooks.dispatcher.start();
  // ROSTER_SECRETS rotation: values sealed with an older key move to the first key, in the background.
  resealWebhookSecrets(
    new ScimClientRepo(storage.db),
    new SecretBox(secrets),
    quiet.logger,
    new RetiredWebhookRepo(storage.db),
    new SetupLinkRepo(storage.db),
  ).catch((e: unknown) =>
    quiet.logger.error({ err: e }, "re-encrypting webhook secrets failed; it is retried at the next start"),
  );
  logger.info(
    { url: `${scheme}://${host}:${port}`, engine: storage.engine, ms: Date.now() - startedAt },
    "Roster ready",
  );
  printWelcome(logger, publicUrl, admin.generated, warnings);
}

/**
 * A runner that dies without forwarding the signal (a shell between npm and node) would orphan Roster and its
 * embedded PostgreSQL; when the parent goes away, shut down as if told to.
 */
function watchParent(onGone: () => void): void {
  const parent = process.ppid;
  if (parent <= 1) return;
  setInterval(() => {
    if (process.ppid !== parent) onGone();
  }, 1000).unref();
}

async function adminTokenHash(db: Db, configured: string | undefined): Promise<{ hash: string; generated?: string }> {
  if (configured !== undefined) return { hash: hashSecret(configured) };
  const existing = await getSetting(db, ADMIN_TOKEN_SETTING);
  if (existing !== undefined) return { hash: existing };
  const token = randomToken(32, "rat_");
  // Several instances may start at once: the first insert wins and only its token is ever shown.
  const won = await putSettingIfAbsent(db, ADMIN_TOKEN_SETTING, hashSecret(token));
  return verifySecret(token, won) ? { hash: won, generated: token } : { hash: won };
}

function printWelcome(
  logger: Logger,
  publicUrl: string,
  generatedToken: string | undefined,
  warnings: readonly string[],
): void {
  const token = generatedToken ?? "$ROSTER_ADMIN_TOKEN";
  const lines = [
    "",
    `  Roster is running at ${publicUrl}`,
    `  Admin API:   ${publicUrl}/v2alpha1/admin   (Authorization: Bearer <admin token>)`,
    `  Portal:      ${publicUrl}/portal/`,
    `  Health:      ${publicUrl}/health/ready`,
    generatedToken === undefined
      ? "  Admin token: set by ROSTER_ADMIN_TOKEN, or printed once on first start"
      : `  Admin token (shown once, only its hash is kept): ${generatedToken}`,
    "",
    "  Create an organization and a SCIM client:",
    `    curl -s -H "Authorization: Bearer ${token}" -H 'content-type: application/json' \\`,
    `      -d '{"name":"Acme"}' ${publicUrl}/v2alpha1/admin/organizations`,
    `    curl -s -H "Authorization: Bearer ${token}" -H 'content-type: application/json' \\`,
    `      -d '{"organization_id":"<id>"}' ${publicUrl}/v2alpha1/admin/scimClients`,
    "",
    ...(warnings.length === 0 ? [] : ["  Before you connect an IdP:", ...warnings.map((w) => `  ! ${w}`), ""]),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  logger.debug("welcome printed");
}

main().catch((e: unknown) => {
  process.stderr.write(`roster: failed to start: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
