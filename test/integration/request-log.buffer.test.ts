import { afterAll, expect, it } from "vitest";
import type { RequestLogStore } from "../../src/observability/request-log/repo.js";
import { useTestApp } from "../helpers/suite.js";
import { scim, seedClient } from "../helpers/seed.js";

/** A database that answers nothing until the test is over: every batch write hangs. */
let inserts = 0;
let answering = false;
const stalledWrites: (() => void)[] = [];
const write = () => (answering ? Promise.resolve() : new Promise<void>((resolve) => void stalledWrites.push(resolve)));
const stalled: RequestLogStore = {
  insert: () => {
    inserts += 1;
    return write();
  },
  addCounts: write,
};

const o = useTestApp({
  observed: {
    requestLog: { capacity: 4, batchSize: 2, flushIntervalMs: 3_600_000, store: stalled },
  },
});
// Runs before the app closes: the writer's stop then finishes at once instead of waiting out its bound on a stalled
// database (which is what it does, as it must).
afterAll(() => {
  answering = true;
  for (const resolve of stalledWrites) resolve();
});

it("drops and counts entries when the buffer is full behind a stalled writer, never blocking a SCIM request", async () => {
  const c = await seedClient(o.t, { request_log: "all" });
  const started = performance.now();
  for (let i = 0; i < 8; i++) {
    const res = await scim(o.t, c, "GET", "/Users");
    expect(res.statusCode).toBe(200);
  }
  // Well below any database timeout: no request waited on the stalled writer.
  expect(performance.now() - started).toBeLessThan(5_000);
  // Two entries went into the one batch in flight (hanging), four fill the buffer, two are dropped.
  expect(inserts).toBe(1);
  expect(o.obs.writer.buffered).toBe(4);
  expect(o.obs.writer.dropped).toBe(2);
  const metrics = await o.t.request({ method: "GET", url: "/metrics" });
  expect(metrics.body).toMatch(/^roster_request_log_dropped_total 2$/m);
});
