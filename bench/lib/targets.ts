import type { Measurement } from "./measure.js";
import { type OpReport, TARGETS, WEBHOOK_TARGETS } from "./report.js";
import type { WebhookResult } from "./webhook.js";

export interface TargetCheck {
  /** The target, in the words of docs/performance.md. */
  readonly target: string;
  /** What this run measured, or why it could not. */
  readonly measured: string;
  /** Undefined when the figure is unavailable. */
  readonly met: boolean | undefined;
}

const READS = ["get", "filter", "list_1", "list_4901", "cursor_first", "cursor_deep"];
const READ_P99_MS = 20;
const CURSOR_DEPTH_FACTOR = 1.5;

const round = (v: number) => (Number.isFinite(v) ? (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(2)) : "–");

/** The targets of docs/performance.md, checked against this run's figures. */
export function checkTargets(
  ops: readonly OpReport[],
  ceiling: Measurement,
  webhook: WebhookResult | { status: "skipped" },
): TargetCheck[] {
  const byName = new Map(ops.map((op) => [op.name, op.measurement]));
  const run = new Set(ops.map((op) => op.name));
  /** Why an operation has no figure: not selected by OPS, or its endpoint or data was unavailable. */
  const absent = (...names: string[]) => (names.every((n) => run.has(n)) ? "unavailable" : "not run (OPS)");
  const checks: TargetCheck[] = [];
  const rate = (name: string, label: string) => {
    const m = byName.get(name);
    const min = TARGETS[name] ?? 0;
    checks.push({
      target: `${label} ≥ ${min} req/s`,
      measured: m === undefined ? absent(name) : `${round(m.requestsPerSecond)} req/s`,
      met: m === undefined ? undefined : m.requestsPerSecond >= min,
    });
  };
  rate("get", "GET by id");
  const get = byName.get("get");
  const share = get === undefined ? Number.NaN : get.requestsPerSecond / ceiling.requestsPerSecond;
  checks.push({
    target: "GET by id ≥ 50 % of the in-run ceiling",
    measured: get === undefined ? absent("get") : `${(share * 100).toFixed(0)} %`,
    met: get === undefined ? undefined : share >= 0.5,
  });
  rate("filter", "userName eq filter");
  rate("create", "create");
  rate("patch", "PATCH");
  rate("put", "PUT");
  rate("list_1", "list page of 100 at startIndex 1");
  rate("list_4901", "list page of 100 at startIndex 4901");

  const first = byName.get("cursor_first");
  const deep = byName.get("cursor_deep");
  const cost = (m: Measurement) => m.serverCpuMsPerRequest + m.postgresCpuMsPerRequest;
  const factor = first === undefined || deep === undefined ? Number.NaN : cost(deep) / cost(first);
  checks.push({
    target: `deep cursor page ≤ ${CURSOR_DEPTH_FACTOR}× the cost of the first (set for depth 90 000 of N=100 000)`,
    measured:
      first === undefined || deep === undefined
        ? absent("cursor_first", "cursor_deep")
        : `${round(factor)}× in CPU ms/req (Roster + PostgreSQL); p50 ${round(deep.p50 / first.p50)}×`,
    met: Number.isFinite(factor) ? factor <= CURSOR_DEPTH_FACTOR : undefined,
  });

  const dispatchTarget = `webhook dispatch ≥ ${WEBHOOK_TARGETS.eventsPerSecond} events/s`;
  if (webhook.status === "ok" && !("unavailable" in webhook.burst)) {
    checks.push({
      target: dispatchTarget,
      measured: `${round(webhook.burst.eventsPerSecond)} events/s`,
      met: webhook.burst.eventsPerSecond >= WEBHOOK_TARGETS.eventsPerSecond,
    });
  } else {
    const why = webhook.status === "skipped" ? "not run (OPS)" : "unavailable";
    checks.push({ target: dispatchTarget, measured: why, met: undefined });
  }
  checks.push({
    target: `p99 added to a SCIM write by a webhook < ${WEBHOOK_TARGETS.addedP99Ms} ms`,
    measured:
      webhook.status === "ok"
        ? `${round(webhook.addedP99Ms)} ms`
        : webhook.status === "skipped"
          ? "not run (OPS)"
          : "unavailable",
    met: webhook.status === "ok" ? webhook.addedP99Ms < WEBHOOK_TARGETS.addedP99Ms : undefined,
  });

  const reads = READS.flatMap((name) => {
    const m = byName.get(name);
    return m === undefined ? [] : [{ name, p99: m.p99 }];
  });
  const slow = reads.filter((r) => r.p99 >= READ_P99_MS);
  checks.push({
    target: `p99 of every read < ${READ_P99_MS} ms`,
    measured:
      reads.length === 0
        ? "unavailable"
        : slow.length === 0
          ? `all ${reads.length} reads`
          : `over: ${slow.map((r) => `${r.name} ${round(r.p99)} ms`).join(", ")}`,
    met: reads.length === 0 ? undefined : slow.length === 0,
  });
  return checks;
}

export function formatTargets(checks: readonly TargetCheck[]): string[] {
  const width = Math.max(...checks.map((c) => c.target.length));
  return [
    "targets:",
    ...checks.map((c) => `  ${c.met === undefined ? "·" : c.met ? "✓" : "✗"} ${c.target.padEnd(width)}  ${c.measured}`),
  ];
}
