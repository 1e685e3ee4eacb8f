import { Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { RequestMetrics } from "../../src/observability/request-metrics.js";

const TOTAL = { name: "t_requests_total", help: "requests" };
const DURATION = { name: "t_request_duration_seconds", help: "latency", buckets: [0.001, 0.01, 0.1, 1] };

/** The same observations through prom-client's own Counter and Histogram, the reference. */
function reference(observations: readonly (readonly [string, number, number])[]): Registry {
  const registry = new Registry();
  const total = new Counter({ ...TOTAL, labelNames: ["operation", "status_class"], registers: [registry] });
  const duration = new Histogram({ ...DURATION, labelNames: ["operation"], registers: [registry] });
  for (const [operation, status, seconds] of observations) {
    const cls = status >= 500 ? "5xx" : status >= 400 ? "4xx" : status >= 300 ? "3xx" : "2xx";
    total.inc({ operation, status_class: cls });
    duration.observe({ operation }, seconds);
  }
  return registry;
}

const lines = async (registry: Registry) => (await registry.metrics()).split("\n").sort();

describe("RequestMetrics exposes what prom-client's Counter and Histogram expose", () => {
  it.each([
    ["nothing observed", []],
    ["one request", [["users.get", 200, 0.0004]]],
    [
      "bounds, above every bound, every status class, two operations",
      [
        ["users.get", 200, 0.001],
        ["users.get", 304, 0.0010001],
        ["users.get", 404, 1],
        ["users.get", 500, 7.5],
        ["users.create", 201, 0.05],
        ["users.create", 409, 0],
      ],
    ],
  ] as const)("%s", async (_name, observations) => {
    const registry = new Registry();
    const metrics = new RequestMetrics(registry, TOTAL, DURATION);
    for (const [operation, status, seconds] of observations) metrics.record(operation, status, seconds);
    expect(await lines(registry)).toEqual(await lines(reference(observations)));
  });
});
