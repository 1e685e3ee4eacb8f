import { readFile } from "node:fs/promises";
import { expect, it } from "vitest";
import { useTestApp } from "../helpers/suite.js";

const o = useTestApp({ observed: { pools: { main: { totalCount: 1, idleCount: 1, waitingCount: 0 } } } });

const readRepoFile = (path: string) => readFile(new URL(`../../${path}`, import.meta.url), "utf8");

/** Roster's own metric families as /metrics declares them (`# TYPE roster_… counter`). */
async function servedMetrics(): Promise<string[]> {
  const res = await o.t.request({ method: "GET", url: "/metrics" });
  expect(res.statusCode).toBe(200);
  return [...res.body.matchAll(/^# TYPE (roster_[a-z_]+) /gm)].map((m) => m[1] ?? "");
}

it("documents every metric /metrics serves in the metrics table of docs/operations.md", async () => {
  const served = await servedMetrics();
  expect(served.length).toBeGreaterThanOrEqual(11);
  const docs = await readRepoFile("docs/operations.md");
  const rows = new Set([...docs.matchAll(/^\| `(roster_[a-z_]+)` \|/gm)].map((m) => m[1]));
  expect(served.filter((name) => !rows.has(name))).toEqual([]);
});

it("charts in the Grafana dashboard and alerts in the documented rules only on metrics that exist", async () => {
  const served = new Set(await servedMetrics());
  const known = (name: string) => served.has(name.replace(/_(bucket|sum|count)$/, ""));
  const dashboard = JSON.parse(await readRepoFile("deploy/grafana/roster-dashboard.json")) as {
    panels: Array<{ targets: Array<{ expr: string }> }>;
  };
  const charted = dashboard.panels.flatMap((p) => p.targets.flatMap((t) => t.expr.match(/roster_[a-z_]+/g) ?? []));
  expect(charted.length).toBeGreaterThanOrEqual(10);
  expect(charted.filter((name) => !known(name))).toEqual([]);
  const docs = await readRepoFile("docs/operations.md");
  const rules = docs.slice(docs.indexOf("### Alert rules"), docs.indexOf("### Grafana dashboard"));
  const alerted = rules.match(/roster_[a-z_]+/g) ?? [];
  expect(alerted.length).toBeGreaterThanOrEqual(5);
  expect(alerted.filter((name) => !known(name))).toEqual([]);
});
