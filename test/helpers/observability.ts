import { ManualClock } from "../../src/platform/clock.js";
import { createLogger } from "../../src/platform/logger.js";
import { createObservability, type Observability, type ObservabilityOptions } from "../../src/observability/index.js";
import { createTestApp, createTestDatabase, type TestApp } from "./app.js";

export interface ObservedApp {
  readonly t: TestApp;
  readonly obs: Observability;
  close(): Promise<void>;
}

/** A test app whose observability (request log writer, metrics, audit) the test holds, on a fresh schema. */
export async function createObservedApp(
  options: { requestLog?: ObservabilityOptions["requestLog"]; retentionDays?: number } = {},
): Promise<ObservedApp> {
  const database = await createTestDatabase();
  const clock = new ManualClock(Date.now());
  const obs = createObservability({
    db: database.db,
    clock,
    logger: createLogger("silent"),
    ...(options.requestLog === undefined ? {} : { requestLog: options.requestLog }),
    ...(options.retentionDays === undefined ? {} : { retentionDays: options.retentionDays }),
  });
  const t = await createTestApp({ database, clock, extra: { observability: obs } });
  return {
    t,
    obs,
    async close() {
      await t.close();
      await database.close();
    },
  };
}
