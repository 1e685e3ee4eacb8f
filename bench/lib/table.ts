import type { Measurement } from "./measure.js";
import { type BenchReport, type OpReport, ratiosTo, WEBHOOK_TARGETS } from "./report.js";
import { formatTargets } from "./targets.js";

const HEADER = [
  "operation",
  "req/s",
  "÷ceiling",
  "target",
  "p50 ms",
  "p90 ms",
  "p99 ms",
  "p99÷ceil",
  "errors",
  "Roster CPU ms/req",
  "PG CPU ms/req",
  "note",
];

const fixed = (v: number, digits: number): string => (Number.isFinite(v) ? v.toFixed(digits) : "–");
const pct = (v: number | undefined): string =>
  v === undefined || !Number.isFinite(v) ? "–" : `${(v * 100).toFixed(0)}%`;

function row(name: string, m: Measurement, ceiling: Measurement, target?: number, note = ""): string[] {
  const ratio = ratiosTo(m, ceiling);
  const met = target === undefined ? "" : `${target} ${m.requestsPerSecond >= target ? "✓" : "✗"}`;
  return [
    name,
    fixed(m.requestsPerSecond, 0),
    pct(ratio?.requestsPerSecond),
    met,
    fixed(m.p50, 2),
    fixed(m.p90, 2),
    fixed(m.p99, 2),
    ratio === undefined ? "–" : `${fixed(ratio.p99, 1)}×`,
    String(m.errors),
    fixed(m.serverCpuMsPerRequest, 3),
    fixed(m.postgresCpuMsPerRequest, 3),
    note,
  ];
}

function opRows(op: OpReport, ceiling: Measurement): string[][] {
  if (op.measurement === undefined) {
    return [[op.name, "unavailable", "", "", "", "", "", "", "", "", "", op.reason ?? ""]];
  }
  return [row(op.name, op.measurement, ceiling, op.targetPerSecond, op.note ?? "")];
}

/** The human summary printed on stdout: one row per operation, then the webhook and load-average lines. */
export function formatTable(report: BenchReport): string {
  const ceiling = report.ceiling;
  const rows: string[][] = [HEADER];
  const reference = (m: Measurement) => (m === ceiling ? `${report.ceilingNote}; the reference` : report.ceilingNote);
  rows.push(row("ceiling (start)", report.ceilingStart, ceiling, undefined, reference(report.ceilingStart)));
  for (const op of report.ops) rows.push(...opRows(op, ceiling));
  const webhook = report.webhook;
  if (webhook.status === "ok") {
    rows.push(row("webhook: PATCH, no hook", webhook.without, ceiling));
    rows.push(row("webhook: PATCH, hooked", webhook.with, ceiling));
  }
  rows.push(row("ceiling (end)", report.ceilingEnd, ceiling, undefined, reference(report.ceilingEnd)));
  const widths = HEADER.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  const lines = rows.map((r) =>
    r
      .map((cell, i) => (i === 0 || i === r.length - 1 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join("  ")
      .trimEnd(),
  );
  lines.splice(1, 0, widths.map((w) => "-".repeat(w)).join("  "));

  lines.push("");
  if (webhook.status === "ok") {
    const okP99 = webhook.addedP99Ms < WEBHOOK_TARGETS.addedP99Ms ? "✓" : "✗";
    lines.push(
      `webhook, PATCH with vs without a webhook: added p99 ${fixed(webhook.addedP99Ms, 2)} ms ` +
        `(target < ${WEBHOOK_TARGETS.addedP99Ms} ${okP99}${webhook.addedP99Ms < 0 ? ", negative: noise" : ""}), ` +
        `added p50 ${fixed(webhook.addedP50Ms, 2)} ms; ${webhook.deliveries} deliveries for ${webhook.writes} ` +
        `writes at ${fixed(webhook.eventsPerSecond, 0)} events/s, the last ${fixed(webhook.drainMs, 0)} ms after ` +
        "the writes ended",
    );
    const burst = webhook.burst;
    if ("unavailable" in burst) lines.push(`webhook dispatch burst: unavailable (${burst.unavailable})`);
    else {
      const okRate = burst.eventsPerSecond >= WEBHOOK_TARGETS.eventsPerSecond ? "✓" : "✗";
      lines.push(
        `webhook dispatch: ${fixed(burst.eventsPerSecond, 0)} events/s (target ${WEBHOOK_TARGETS.eventsPerSecond} ` +
          `${okRate}) draining ${burst.deliveries} deliveries for ${burst.membersAdded} members added by ` +
          `${burst.ok}/${burst.requests} group PATCHes in ${fixed(burst.writeMs, 0)} ms; the last delivery ` +
          `${fixed(burst.drainMs, 0)} ms after the writes${burst.cutShort ? " (cut short at the time limit)" : ""}; ` +
          `CPU per event (writes included): Roster ${fixed(burst.rosterCpuMsPerEvent, 3)} ms, PostgreSQL ` +
          `${fixed(burst.postgresCpuMsPerEvent, 3)} ms` +
          `${burst.firstError === undefined ? "" : `; first error ${burst.firstError}`}`,
      );
    }
  } else if (webhook.status === "unavailable") {
    lines.push(`webhook dispatch: unavailable (${webhook.reason})`);
  }
  if (lines[lines.length - 1] !== "") lines.push("");
  lines.push(...formatTargets(report.targets), "");
  const la = (v: number[]) => v.map((x) => x.toFixed(2)).join(" ");
  lines.push(`load average: start ${la(report.loadAverage.start)}, end ${la(report.loadAverage.end)}`);
  lines.push(
    `machine: ${report.machine.nproc} cores, ${report.machine.memoryMiB} MiB, ${report.machine.cpu}; ` +
      `${report.database}; PostgreSQL CPU = ${report.postgresCpuScope}`,
  );
  if (report.rosterErrorLines.length > 0) {
    lines.push(
      `Roster logged ${report.rosterErrorLines.length} error line(s); the first: ${report.rosterErrorLines[0]}`,
    );
  }
  return lines.join("\n");
}
