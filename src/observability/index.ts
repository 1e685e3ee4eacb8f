import type { FastifyInstance } from "fastify";
import type { Clock } from "../platform/clock.js";
import type { Logger } from "../platform/logger.js";
import type { Db } from "../storage/database.js";
import type { Tracer } from "@opentelemetry/api";
import type { WebhookSender } from "../webhooks/sender.js";
import { AuditRepo } from "./audit/repo.js";
import { Metrics, type PoolStats } from "./metrics.js";
import { type ConnectionHealth, RequestLogRepo, type RequestLogStore } from "./request-log/repo.js";
import { RequestLogWriter } from "./request-log/writer.js";
import { traceSender } from "./tracing.js";
import { outboxStats } from "./outbox-stats-repo.js";

export { installAdminObservability } from "./admin-hooks.js";
export { installScimObservability } from "./scim-hooks.js";
export { installRequestTracing, startTracing, type Tracing, traceMappings } from "./tracing.js";

const DAY_MS = 24 * 3600_000;

export interface ObservabilityOptions {
  readonly db: Db;
  /** Where the request log's batches go; default `db`. The server passes its `synchronous_commit = off` pool. */
  readonly writerDb?: Db;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly retentionDays?: number;
  /** Set when traces are exported (OTEL_EXPORTER_OTLP_ENDPOINT): requests, mappings and deliveries get spans. */
  readonly tracer?: Tracer;
  /** Connection pools to report on /metrics, by name. */
  readonly pools?: Readonly<Record<string, PoolStats>>;
  /** Tests: a tiny buffer, a stalled store. */
  readonly requestLog?: {
    readonly capacity?: number;
    readonly batchSize?: number;
    readonly flushIntervalMs?: number;
    readonly store?: RequestLogStore;
  };
}

/** The operator's eyes, assembled: metrics, the SCIM request log and its writer, the admin audit trail. */
export interface Observability {
  readonly metrics: Metrics;
  readonly requestLog: RequestLogRepo;
  readonly writer: RequestLogWriter;
  readonly audit: AuditRepo;
  readonly tracer: Tracer | undefined;
  /** The health fields of a connection's admin read. */
  health(clientId: string): Promise<Record<string, unknown>>;
  /** The webhook sender, its attempts measured (and traced when tracing is on). */
  wrapSender(sender: WebhookSender): WebhookSender;
}

export function createObservability(o: ObservabilityOptions): Observability {
  const metrics = new Metrics();
  const requestLog = new RequestLogRepo(o.db);
  const writerRepo = new RequestLogRepo(o.writerDb ?? o.db);
  const writer = new RequestLogWriter({
    store: o.requestLog?.store ?? writerRepo,
    repo: writerRepo,
    clock: o.clock,
    logger: o.logger.child({ component: "request-log" }),
    onDrop: () => metrics.requestLogDropped(),
    ...(o.retentionDays === undefined ? {} : { retentionDays: o.retentionDays }),
    ...(o.requestLog?.capacity === undefined ? {} : { capacity: o.requestLog.capacity }),
    ...(o.requestLog?.batchSize === undefined ? {} : { batchSize: o.requestLog.batchSize }),
    ...(o.requestLog?.flushIntervalMs === undefined ? {} : { flushIntervalMs: o.requestLog.flushIntervalMs }),
  });
  if (o.pools !== undefined) metrics.watchPools(o.pools);
  metrics.watchOutbox(() => outboxStats(o.db, o.clock));
  return {
    metrics,
    requestLog,
    writer,
    audit: new AuditRepo(o.db),
    async health(clientId) {
      const h: ConnectionHealth = await requestLog.health(clientId, new Date(o.clock.now().getTime() - DAY_MS));
      return {
        last_request_time: h.lastRequestTime?.toISOString() ?? null,
        request_count_24h: h.requests,
        error_count_24h: h.errors,
      };
    },
    tracer: o.tracer,
    wrapSender(sender) {
      const traced = o.tracer === undefined ? sender : traceSender(sender, o.tracer);
      return {
        async send(request) {
          const result = await traced.send(request);
          const outcome = result.success ? "success" : result.statusCode === null ? "error" : "failure";
          metrics.webhookDelivery(outcome, result.durationMs / 1000);
          return result;
        },
      };
    },
  };
}

/** Serves /metrics from the observability registry, and runs the request log writer while the app is open. */
export function registerMetricsAndWriter(app: FastifyInstance, observability: Observability): void {
  const { registry } = observability.metrics;
  app.get("/metrics", async (_req, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
  observability.writer.start();
  app.addHook("onClose", async () => {
    await observability.writer.stop();
  });
}
