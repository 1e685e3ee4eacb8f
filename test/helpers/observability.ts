import type { PoolStats } from "../../src/observability/metrics.js";
import { createObservability, type Observability, type ObservabilityOptions } from "../../src/observability/index.js";
import { ManualClock } from "../../src/platform/clock.js";
import { createLogger } from "../../src/platform/logger.js";
import type { Webhooks } from "../../src/webhooks/index.js";
import { createTestApp, type TestApp } from "./app.js";
import { createTestDatabase } from "./database.js";

export interface ObservedApp {
  readonly t: TestApp;
  readonly obs: Observability;
  /** The app's webhooks module, delivery outcomes reported to `obs` (dispatcher driven by hand). */
  readonly webhooks: Webhooks;
  close(): Promise<void>;
}

/** A test app whose observability (request log writer, metrics, audit) and webhooks the test holds. */
export async function createObservedApp(
  options: {
    requestLog?: ObservabilityOptions["requestLog"];
    retentionDays?: number;
    pools?: Readonly<Record<string, PoolStats>>;
  } = {},
): Promise<ObservedApp> {
  const database = await createTestDatabase();
  const clock = new ManualClock(Date.now());
  const obs = createObservability({
    db: database.db,
    clock,
    logger: createLogger("silent"),
    ...(options.requestLog === undefined ? {} : { requestLog: options.requestLog }),
    ...(options.retentionDays === undefined ? {} : { retentionDays: options.retentionDays }),
    ...(options.pools === undefined ? {} : { pools: options.pools }),
  });
  const t = await createTestApp({
    database,
    clock,
    webhooks: { wrapSender: obs.wrapSender },
    extra: { observability: obs },
  });
  return {
    t,
    obs,
    webhooks: t.webhooks,
    async close() {
      await t.webhooks.dispatcher.stop();
      await t.close();
      await database.close();
    },
  };
}
