import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { OpName } from "../lib/config.js";
import type { Measurement } from "../lib/measure.js";
import { ROOT } from "../lib/roster.js";

export interface PeerRow {
  readonly op: OpName;
  readonly describe: string;
  /** A measurement, or why the op could not be measured on that server. */
  readonly roster: Measurement | string | undefined;
  readonly peer: Measurement | string | undefined;
  /** Where the peer does less (or other) work than the SCIM spec asks for this op. */
  readonly note: string | undefined;
}

export interface PeerReport {
  readonly date: string;
  readonly machine: Record<string, unknown>;
  readonly database: string;
  readonly peer: string;
  readonly config: { users: number; groups: number; connections: number; seconds: number };
  readonly rows: readonly PeerRow[];
}

/** What Polis does differently for each measured op, read from its source: shown beside the ratio, not hidden. */
export const PEER_NOTES: Partial<Record<OpName, string>> = {
  filter: "Polis: only `userName eq`, the value cut out of the filter text; no filter grammar",
  list_1: "Polis: reads every user of the directory to count them, on each page",
  list_4901: "Polis: reads every user of the directory to count them, on each page",
  patch:
    "Polis: no PATCH validation; each op's `path` is copied into the stored JSON as a literal key (filtered and URN paths included)",
  put: "Polis: no schema validation, no uniqueness check",
  create: "Polis: uniqueness by a lookup before the insert (no constraint); no schema validation",
  group_patch: "Polis: one statement per added member",
};

const num = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "—");

export function formatPeerTable(report: PeerReport): string {
  const lines = [
    `${report.peer}; ${report.database}; ${report.config.users} users, ${report.config.groups} groups, ` +
      `${report.config.connections} connections, ${report.config.seconds} s per op; ${String(report.machine.cpu)} ` +
      `× ${String(report.machine.nproc)}, Node ${String(report.machine.node)}`,
    "",
    "| op | Roster req/s | Roster p50 / p99 ms | Polis req/s | Polis p50 / p99 ms | Roster ÷ Polis | note |",
    "|---|---:|---:|---:|---:|---:|---|",
  ];
  for (const row of report.rows) {
    const side = (m: Measurement | string | undefined) =>
      typeof m === "object"
        ? [num(m.requestsPerSecond), `${num(m.p50, 2)} / ${num(m.p99, 2)}`]
        : [`unavailable${m === undefined ? "" : ` (${m})`}`, "—"];
    const ratio =
      typeof row.roster === "object" && typeof row.peer === "object"
        ? row.roster.requestsPerSecond / row.peer.requestsPerSecond
        : Number.NaN;
    lines.push(
      `| ${row.op} | ${[...side(row.roster), ...side(row.peer)].join(" | ")} | ${Number.isFinite(ratio) ? `**${num(ratio, 2)}×**` : "—"} | ${row.note ?? ""} |`,
    );
  }
  return lines.join("\n");
}

export async function writePeerReport(report: PeerReport): Promise<string> {
  const dir = join(ROOT, "bench", "results");
  await mkdir(dir, { recursive: true });
  const file = join(dir, `peers-${report.date.replace(/[:.]/g, "-")}.json`);
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}
