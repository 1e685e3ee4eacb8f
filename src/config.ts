import { isIP } from "node:net";
import type { LevelWithSilent } from "pino";
import type { LogFormat } from "./platform/logger.js";
import { parseTrustProxy, type TrustProxy } from "./platform/trust-proxy.js";
import { DEFAULT_DATABASE_TIMEOUTS, type DatabaseTimeouts } from "./storage/timeouts.js";
import { parseAllowList } from "./platform/outbound/allow-list.js";

/**
 * The typed configuration of one Roster process, parsed once from ROSTER_* variables (their defaults: README.md,
 * "Configuration").
 */
export interface Config {
  readonly host: string;
  readonly port: number;
  readonly database: DatabaseTarget;
  readonly dataDir: string;
  /** Undefined: generate one on first start and keep only its hash. */
  readonly adminToken: string | undefined;
  /** Undefined: generated into the data dir (embedded engines only). */
  readonly secrets: readonly Buffer[] | undefined;
  /** Undefined: http://HOST:PORT, known once listening. */
  readonly publicUrl: string | undefined;
  readonly logLevel: LevelWithSilent;
  readonly webhookTimeoutMs: number;
  readonly webhookLogRetentionDays: number;
  /** ROSTER_REQUEST_LOG_RETENTION_DAYS: how long SCIM request log entries are kept. */
  readonly requestLogRetentionDays: number;
  /** ROSTER_LOG_FORMAT: `pretty` lines, `json` lines, or `auto` (pretty on a terminal). */
  readonly logFormat: LogFormat;
  /** Traces are exported when an OTLP endpoint is set (OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT) and OTEL_SDK_DISABLED is not true; the SDK reads the other OTEL_* variables itself. */
  readonly tracing: boolean;
  /** Bounds on every connection attempt, statement and idle transaction (storage/timeouts.ts). */
  readonly databaseTimeouts: DatabaseTimeouts;
  /** ROSTER_MAPPING_DIR: `file://` mapping scripts only below it; undefined refuses them. */
  readonly mappingDir: string | undefined;
  /** ROSTER_MAPPING_URL_ALLOW: hosts, IPs or CIDR ranges `http(s)://` mapping scripts may come from; empty refuses. */
  readonly mappingUrlAllow: readonly string[];
  /**
   * ROSTER_WEBHOOK_URL_ALLOW: IP addresses or CIDR ranges of non-public addresses webhooks may reach; host names,
   * if any, become the only hosts webhooks may name. Empty: any public host, no loopback/private/link-local address.
   */
  readonly webhookUrlAllow: readonly string[];
  /** How long the events feed keeps events. */
  readonly eventRetentionDays: number;
  /** How often a webhook dispatcher renews its heartbeat; one silent for 5 intervals is taken for dead. */
  readonly webhookHeartbeatMs: number;
  /** ROSTER_TLS_CERT and ROSTER_TLS_KEY: PEM files Roster serves HTTPS with (re-read on SIGHUP); undefined: HTTP. */
  readonly tls: TlsFiles | undefined;
  /** ROSTER_TRUST_PROXY: which peers' X-Forwarded-For/-Proto/-Host are believed (Fastify's `trustProxy`). */
  readonly trustProxy: TrustProxy;
}

export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
}

export type { TrustProxy };

export type { LogFormat };

export type DatabaseTarget =
  | { readonly kind: "embedded"; readonly persistent: true }
  | { readonly kind: "embedded"; readonly persistent: false }
  | { readonly kind: "server"; readonly url: string; readonly pooling: DatabasePooling };

/**
 * How Roster reaches a PostgreSQL server: `session` (directly, or through a session pooler) keeps per-connection
 * state — named prepared statements and session settings; `transaction` (behind PgBouncer or another pooler in
 * transaction mode) keeps none, since consecutive transactions may run on different server connections.
 */
export type DatabasePooling = "session" | "transaction";

export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n  - ${problems.join("\n  - ")}`);
    this.problems = problems;
  }
}

const LEVELS: readonly string[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];
export const MIN_SECRET_BYTES = 32;
/** An hour: any longer and a database bound stops bounding anything a client would wait for. */
const MAX_DATABASE_TIMEOUT_MS = 3_600_000;

/** Reports every bad variable at once, then throws. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const problems: string[] = [];
  const get = (name: string): string | undefined => {
    const v = env[name]?.trim();
    return v === undefined || v === "" ? undefined : v;
  };

  const host = get("ROSTER_HOST") ?? "127.0.0.1";
  if (host !== "localhost" && isIP(host) === 0 && !/^[a-z0-9.-]+$/i.test(host)) {
    problems.push(`ROSTER_HOST: "${host}" is not an IP address or host name`);
  }

  const port = parseInteger(get("ROSTER_PORT") ?? "8080");
  if (port === undefined || port < 0 || port > 65535) {
    problems.push(`ROSTER_PORT: "${get("ROSTER_PORT")}" must be an integer from 0 to 65535 (0 = any free port)`);
  }

  let database: DatabaseTarget = { kind: "embedded", persistent: true };
  const url = get("ROSTER_DATABASE_URL");
  if (url === "memory:") database = { kind: "embedded", persistent: false };
  else if (url !== undefined) {
    if (/^postgres(ql)?:\/\//.test(url) && URL.canParse(url)) database = { kind: "server", url, pooling: "session" };
    else problems.push("ROSTER_DATABASE_URL: must be a postgres:// or postgresql:// URL, or memory:");
  }
  const pooling = get("ROSTER_DATABASE_POOLING");
  if (pooling !== undefined) {
    if (pooling !== "session" && pooling !== "transaction") {
      problems.push('ROSTER_DATABASE_POOLING: must be "session" or "transaction"');
    } else if (database.kind !== "server") {
      if (pooling === "transaction")
        problems.push("ROSTER_DATABASE_POOLING: transaction needs ROSTER_DATABASE_URL=postgres://…");
    } else database = { ...database, pooling };
  }

  const adminToken = get("ROSTER_ADMIN_TOKEN");
  if (adminToken !== undefined && adminToken.length < 16) {
    problems.push("ROSTER_ADMIN_TOKEN: must be at least 16 characters");
  }

  let secrets: Buffer[] | undefined;
  const rawSecrets = get("ROSTER_SECRETS");
  if (rawSecrets !== undefined) {
    secrets = rawSecrets.split(",").map((s) => Buffer.from(s.trim(), "utf8"));
    secrets.forEach((s, i) => {
      if (s.length < MIN_SECRET_BYTES) {
        problems.push(
          `ROSTER_SECRETS: key #${i + 1} has ${s.length} bytes; each key needs at least ${MIN_SECRET_BYTES}`,
        );
      }
    });
  } else if (database.kind === "server") {
    problems.push(
      "ROSTER_SECRETS: required with ROSTER_DATABASE_URL=postgres://… (every instance must share the same keys)",
    );
  }

  const publicUrl = get("ROSTER_PUBLIC_URL");
  if (publicUrl !== undefined && !/^https?:\/\//.test(publicUrl)) {
    problems.push("ROSTER_PUBLIC_URL: must be an http:// or https:// URL");
  }

  const logLevel = get("ROSTER_LOG_LEVEL") ?? "info";
  if (!LEVELS.includes(logLevel)) problems.push(`ROSTER_LOG_LEVEL: must be one of ${LEVELS.join(", ")}`);

  const webhookTimeoutMs = parseInteger(get("ROSTER_WEBHOOK_TIMEOUT_MS") ?? "10000");
  if (webhookTimeoutMs === undefined || webhookTimeoutMs < 100 || webhookTimeoutMs > 120_000) {
    problems.push("ROSTER_WEBHOOK_TIMEOUT_MS: must be an integer from 100 to 120000");
  }
  const retention = parseInteger(get("ROSTER_WEBHOOK_LOG_RETENTION_DAYS") ?? "30");
  if (retention === undefined || retention < 1) {
    problems.push("ROSTER_WEBHOOK_LOG_RETENTION_DAYS: must be a positive integer");
  }

  const requestLogRetention = parseInteger(get("ROSTER_REQUEST_LOG_RETENTION_DAYS") ?? "7");
  if (requestLogRetention === undefined || requestLogRetention < 1) {
    problems.push("ROSTER_REQUEST_LOG_RETENTION_DAYS: must be a positive integer");
  }
  const logFormat = get("ROSTER_LOG_FORMAT") ?? "auto";
  if (!["auto", "pretty", "json"].includes(logFormat)) problems.push("ROSTER_LOG_FORMAT: must be auto, pretty or json");
  const timeout = (name: string, fallback: number, min: number): number => {
    const raw = get(name);
    const value = parseInteger(raw ?? String(fallback));
    if (value === undefined || (value !== 0 && value < min) || value > MAX_DATABASE_TIMEOUT_MS) {
      problems.push(`${name}: "${raw}" must be 0 (no limit) or an integer from ${min} to ${MAX_DATABASE_TIMEOUT_MS}`);
      return fallback;
    }
    return value;
  };
  const databaseTimeouts: DatabaseTimeouts = {
    connectMs: timeout("ROSTER_DATABASE_CONNECT_TIMEOUT_MS", DEFAULT_DATABASE_TIMEOUTS.connectMs, 100),
    statementMs: timeout("ROSTER_DATABASE_STATEMENT_TIMEOUT_MS", DEFAULT_DATABASE_TIMEOUTS.statementMs, 100),
    idleInTransactionMs: timeout(
      "ROSTER_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS",
      DEFAULT_DATABASE_TIMEOUTS.idleInTransactionMs,
      100,
    ),
  };
  const mappingAllow = parseAllowList("ROSTER_MAPPING_URL_ALLOW", get("ROSTER_MAPPING_URL_ALLOW"));
  const mappingUrlAllow = mappingAllow.entries;
  const webhookAllow = parseAllowList("ROSTER_WEBHOOK_URL_ALLOW", get("ROSTER_WEBHOOK_URL_ALLOW"));
  problems.push(...mappingAllow.problems, ...webhookAllow.problems);
  const eventRetention = parseInteger(get("ROSTER_EVENT_RETENTION_DAYS") ?? "30");
  if (eventRetention === undefined || eventRetention < 1 || eventRetention > 3650) {
    problems.push("ROSTER_EVENT_RETENTION_DAYS: must be an integer from 1 to 3650");
  }
  const heartbeat = parseInteger(get("ROSTER_WEBHOOK_HEARTBEAT_MS") ?? "1000");
  if (heartbeat === undefined || heartbeat < 50 || heartbeat > 60_000) {
    problems.push("ROSTER_WEBHOOK_HEARTBEAT_MS: must be an integer from 50 to 60000");
  }

  const certFile = get("ROSTER_TLS_CERT");
  const keyFile = get("ROSTER_TLS_KEY");
  if ((certFile === undefined) !== (keyFile === undefined)) {
    problems.push(
      "ROSTER_TLS_CERT and ROSTER_TLS_KEY: set both (PEM certificate chain and private key files) or neither",
    );
  }
  const trustProxy = parseTrustProxy(get("ROSTER_TRUST_PROXY") ?? "false");
  if (typeof trustProxy === "string") problems.push(`ROSTER_TRUST_PROXY: ${trustProxy}`);

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    host,
    port: port ?? 8080,
    database,
    dataDir: get("ROSTER_DATA_DIR") ?? "./.roster",
    adminToken,
    secrets,
    publicUrl: publicUrl?.replace(/\/+$/, ""),
    logLevel: logLevel as LevelWithSilent,
    webhookTimeoutMs: webhookTimeoutMs ?? 10_000,
    webhookLogRetentionDays: retention ?? 30,
    requestLogRetentionDays: requestLogRetention ?? 7,
    logFormat: logFormat as LogFormat,
    tracing:
      get("OTEL_SDK_DISABLED")?.toLowerCase() !== "true" &&
      (get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") ?? get("OTEL_EXPORTER_OTLP_ENDPOINT")) !== undefined,
    databaseTimeouts,
    mappingDir: get("ROSTER_MAPPING_DIR"),
    mappingUrlAllow,
    webhookUrlAllow: webhookAllow.entries,
    webhookHeartbeatMs: heartbeat ?? 1000,
    eventRetentionDays: eventRetention ?? 30,
    tls: certFile !== undefined && keyFile !== undefined ? { certFile, keyFile } : undefined,
    trustProxy: typeof trustProxy === "string" ? false : trustProxy,
  };
}

function parseInteger(raw: string): number | undefined {
  return /^-?\d+$/.test(raw) ? Number(raw) : undefined;
}

/** The effective configuration for the start-up log line, secrets masked. */
export function describeConfig(config: Config): Record<string, unknown> {
  return {
    host: config.host,
    port: config.port,
    database:
      config.database.kind === "server"
        ? `${maskUrl(config.database.url)}${config.database.pooling === "transaction" ? " (transaction pooling)" : ""}`
        : config.database.persistent
          ? `embedded (${config.dataDir})`
          : "embedded (memory:)",
    dataDir: config.dataDir,
    adminToken: config.adminToken === undefined ? "(generated on first start)" : "***",
    secrets:
      config.secrets !== undefined
        ? `${config.secrets.length} key(s), ***`
        : config.database.kind === "embedded" && !config.database.persistent
          ? "(generated for this process)"
          : "(generated into the data dir)",
    publicUrl: config.publicUrl ?? "(http://HOST:PORT)",
    logLevel: config.logLevel,
    webhookTimeoutMs: config.webhookTimeoutMs,
    webhookLogRetentionDays: config.webhookLogRetentionDays,
    requestLogRetentionDays: config.requestLogRetentionDays,
    logFormat: config.logFormat,
    tracing: config.tracing ? "OTLP/HTTP (OTEL_* variables)" : "off",
    databaseTimeouts: config.databaseTimeouts,
    mappingDir: config.mappingDir ?? "(unset: file:// mappings refused)",
    mappingUrlAllow:
      config.mappingUrlAllow.length > 0 ? config.mappingUrlAllow.join(",") : "(unset: http(s):// mappings refused)",
    webhookUrlAllow:
      config.webhookUrlAllow.length > 0 ? config.webhookUrlAllow.join(",") : "(unset: public addresses only)",
    webhookHeartbeatMs: config.webhookHeartbeatMs,
    eventRetentionDays: config.eventRetentionDays,
    tls: config.tls === undefined ? "off (HTTP)" : `${config.tls.certFile} + ${config.tls.keyFile}`,
    trustProxy: Array.isArray(config.trustProxy) ? config.trustProxy.join(",") : config.trustProxy,
  };
}

function maskUrl(url: string): string {
  const u = new URL(url);
  if (u.password !== "") u.password = "***";
  return u.toString();
}
