import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { OpName } from "../lib/config.js";
import type { Measurement } from "../lib/measure.js";
import { ROOT } from "../lib/roster.js";

/** One server's measurements of one operation, a measurement per round. */
export interface PeerSide {
  readonly rounds: readonly Measurement[];
}

export interface PeerRow {
  readonly op: OpName;
  readonly describe: string;
  /** The measurements, or why the op could not be measured on that server. */
  readonly roster: PeerSide | string | undefined;
  readonly peer: PeerSide | string | undefined;
  /** Rounds asked for: each measures Roster, then the peer. */
  readonly rounds: number;
  /** Where the peer does less (or other) work than the SCIM spec asks for this op. */
  readonly note: string | undefined;
}

export interface PeerReport {
  readonly date: string;
  readonly machine: Record<string, unknown>;
  readonly database: string;
  readonly peer: string;
  readonly config: { users: number; groups: number; connections: number; seconds: number; rounds: number };
  /** The machine's load average (1, 5, 15 min) when the run started and ended. */
  readonly load: { start: readonly number[]; end: readonly number[] };
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

/** CPU per request of one measurement: the server's process tree plus its PostgreSQL backends. */
export const cpuPerRequest = (m: Measurement) => m.serverCpuMsPerRequest + m.postgresCpuMsPerRequest;

/** Per round: Roster's req/s ÷ the peer's, and the peer's CPU per request ÷ Roster's (higher = Roster better). */
export function roundRatios(row: PeerRow): { throughput: number[]; cpu: number[] } {
  const throughput: number[] = [];
  const cpu: number[] = [];
  if (typeof row.roster !== "object" || typeof row.peer !== "object") return { throughput, cpu };
  const peer = row.peer.rounds;
  row.roster.rounds.forEach((r, i) => {
    const p = peer[i];
    if (p === undefined) return;
    throughput.push(r.requestsPerSecond / p.requestsPerSecond);
    cpu.push(cpuPerRequest(p) / cpuPerRequest(r));
  });
  return { throughput, cpu };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

const load = (l: readonly number[]) => l.map((v) => v.toFixed(2)).join(" ");

export function formatPeerTable(report: PeerReport): string {
  const lines = [
    `${report.peer}; ${report.database}; ${report.config.users} users, ${report.config.groups} groups, ` +
      `${report.config.connections} connections, ${report.config.seconds} s per op and server, ` +
      `${report.config.rounds} rounds interleaved; ${String(report.machine.cpu)} × ${String(report.machine.nproc)}, ` +
      `Node ${String(report.machine.node)}; load average ${load(report.load.start)} at start, ` +
      `${load(report.load.end)} at end`,
    "",
    "req/s and CPU ms/req are medians of the rounds; CPU = the server's process tree + its PostgreSQL backends.",
    "Each ratio is the lowest of the rounds (every round's in brackets); above 1 = Roster better.",
    "",
    "| op | Roster req/s | Polis req/s | req/s ratio | Roster CPU ms/req (server + PG) | Polis CPU ms/req (server + PG) | CPU ratio | note |",
    "|---|---:|---:|---:|---:|---:|---:|---|",
  ];
  for (const row of report.rows) {
    const side = (s: PeerSide | string | undefined) => {
      if (typeof s !== "object") return [`unavailable${s === undefined ? "" : ` (${s})`}`, "—"];
      const server = median(s.rounds.map((m) => m.serverCpuMsPerRequest));
      const pg = median(s.rounds.map((m) => m.postgresCpuMsPerRequest));
      return [
        num(median(s.rounds.map((m) => m.requestsPerSecond))),
        `${num(median(s.rounds.map(cpuPerRequest)), 3)} (${num(server, 3)} + ${num(pg, 3)})`,
      ];
    };
    const [rReq, rCpu] = side(row.roster);
    const [pReq, pCpu] = side(row.peer);
    const { throughput, cpu } = roundRatios(row);
    const lowest = (ratios: number[]) =>
      ratios.length === 0 ? "—" : `**${num(Math.min(...ratios), 2)}×** (${ratios.map((r) => num(r, 2)).join(", ")})`;
    lines.push(
      `| ${row.op} | ${rReq} | ${pReq} | ${lowest(throughput)} | ${rCpu} | ${pCpu} | ${lowest(cpu)} | ${row.note ?? ""} |`,
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
