import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { RequestMetrics } from "./request-metrics.js";

/** Seconds; from a cached GET (~1 ms) to a slow write under load. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const DELIVERY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** A pool's connection counts, as pg.Pool exposes them. */
export interface PoolStats {
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
}

export interface OutboxStats {
  readonly backlog: number;
  readonly oldestAgeSeconds: number;
}

/**
 * Every metric Roster exposes on /metrics (docs/operations.md has the table). Labels are bounded: an operation name
 * (`users.create`), a status class, an outcome, a pool name — never a client id, a path or a resource id. A request
 * costs one map lookup and a few increments (RequestMetrics).
 */
export class Metrics {
  readonly registry = new Registry();
  readonly #scim: RequestMetrics;
  readonly #admin: RequestMetrics;
  readonly #deliveries: Counter<"outcome">;
  readonly #deliveryDuration: Histogram<"outcome">;
  readonly #dropped: Counter;
  readonly #rateLimited: Counter;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    const registers = [this.registry];
    this.#scim = new RequestMetrics(
      this.registry,
      { name: "roster_scim_requests_total", help: "SCIM requests answered, by operation and status class" },
      {
        name: "roster_scim_request_duration_seconds",
        help: "SCIM request latency, from receiving the request to the last byte of the answer",
        buckets: LATENCY_BUCKETS,
      },
    );
    this.#admin = new RequestMetrics(
      this.registry,
      { name: "roster_admin_requests_total", help: "Admin API requests answered, by operation and status class" },
      { name: "roster_admin_request_duration_seconds", help: "Admin API request latency", buckets: LATENCY_BUCKETS },
    );
    this.#deliveries = new Counter({
      name: "roster_webhook_deliveries_total",
      help: "Webhook delivery attempts, by outcome (success: a 2xx answer; failure: another status; error: no answer)",
      labelNames: ["outcome"],
      registers,
    });
    this.#deliveryDuration = new Histogram({
      name: "roster_webhook_delivery_duration_seconds",
      help: "Webhook delivery attempt latency, by outcome",
      labelNames: ["outcome"],
      buckets: DELIVERY_BUCKETS,
      registers,
    });
    this.#dropped = new Counter({
      name: "roster_request_log_dropped_total",
      help: "SCIM request log entries dropped because the write buffer was full",
      registers,
    });
    this.#rateLimited = new Counter({
      name: "roster_api_key_rate_limited_total",
      help: "API key verifications refused because a rate limit was exhausted",
      registers,
    });
  }

  scimRequest(operation: string, status: number, seconds: number): void {
    this.#scim.record(operation, status, seconds);
  }

  adminRequest(operation: string, status: number, seconds: number): void {
    this.#admin.record(operation, status, seconds);
  }

  webhookDelivery(outcome: "success" | "failure" | "error", seconds: number): void {
    this.#deliveries.inc({ outcome });
    this.#deliveryDuration.observe({ outcome }, seconds);
  }

  requestLogDropped(): void {
    this.#dropped.inc();
  }

  apiKeyRateLimited(): void {
    this.#rateLimited.inc();
  }

  /** Connection counts of each named pool, read when /metrics is scraped. */
  watchPools(pools: Readonly<Record<string, PoolStats>>): void {
    new Gauge({
      name: "roster_db_pool_connections",
      help: "PostgreSQL connections of each pool: total open, idle, and requests waiting for one",
      labelNames: ["pool", "state"],
      registers: [this.registry],
      collect() {
        for (const [pool, p] of Object.entries(pools)) {
          this.set({ pool, state: "total" }, p.totalCount);
          this.set({ pool, state: "idle" }, p.idleCount);
          this.set({ pool, state: "waiting" }, p.waitingCount);
        }
      },
    });
  }

  /** The webhook outbox, read when /metrics is scraped (one index-served query). */
  watchOutbox(read: () => Promise<OutboxStats>): void {
    let pending: Promise<OutboxStats> | undefined;
    // Both gauges share one read per scrape.
    const once = (): Promise<OutboxStats> => {
      pending ??= read().finally(() => {
        setImmediate(() => {
          pending = undefined;
        });
      });
      return pending;
    };
    const gauge = (name: string, help: string, value: (stats: OutboxStats) => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        async collect() {
          this.set(value(await once()));
        },
      });
    gauge(
      "roster_webhook_outbox_backlog",
      "Webhook events recorded and not yet delivered (counted up to 100000)",
      (s) => s.backlog,
    );
    gauge(
      "roster_webhook_outbox_oldest_age_seconds",
      "Age of the oldest undelivered webhook event; 0 when the outbox is empty",
      (s) => s.oldestAgeSeconds,
    );
  }
}
