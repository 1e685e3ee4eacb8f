import { isIP } from "node:net";
import type { LevelWithSilent } from "pino";

/** The typed configuration of one Roster process, parsed once from ROSTER_* variables (DESIGN.md). */
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
  /** How long the events feed keeps events. */
  readonly eventRetentionDays: number;
  /** How often a webhook dispatcher renews its heartbeat; one silent for 5 intervals is taken for dead. */
  readonly webhookHeartbeatMs: number;
}

export type DatabaseTarget =
  | { readonly kind: "embedded"; readonly persistent: true }
  | { readonly kind: "embedded"; readonly persistent: false }
  | { readonly kind: "server"; readonly url: string };

export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n  - ${problems.join("\n  - ")}`);
    this.problems = problems;
  }
}

const LEVELS: readonly string[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];
export const MIN_SECRET_BYTES = 32;

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
    if (/^postgres(ql)?:\/\//.test(url) && URL.canParse(url)) database = { kind: "server", url };
    else problems.push("ROSTER_DATABASE_URL: must be a postgres:// or postgresql:// URL, or memory:");
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

  const eventRetention = parseInteger(get("ROSTER_EVENT_RETENTION_DAYS") ?? "30");
  if (eventRetention === undefined || eventRetention < 1 || eventRetention > 3650) {
    problems.push("ROSTER_EVENT_RETENTION_DAYS: must be an integer from 1 to 3650");
  }
  const heartbeat = parseInteger(get("ROSTER_WEBHOOK_HEARTBEAT_MS") ?? "1000");
  if (heartbeat === undefined || heartbeat < 50 || heartbeat > 60_000) {
    problems.push("ROSTER_WEBHOOK_HEARTBEAT_MS: must be an integer from 50 to 60000");
  }

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
    webhookHeartbeatMs: heartbeat ?? 1000,
    eventRetentionDays: eventRetention ?? 30,
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
        ? maskUrl(config.database.url)
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
    webhookHeartbeatMs: config.webhookHeartbeatMs,
    eventRetentionDays: config.eventRetentionDays,
  };
}

function maskUrl(url: string): string {
  const u = new URL(url);
  if (u.password !== "") u.password = "***";
  return u.toString();
}
