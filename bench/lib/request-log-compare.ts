import type { OpReport } from "./report.js";

export type RequestLogMode = "errors" | "all";

export interface CompareOptions {
  readonly rounds: number;
  /** Switches the measured client's request log. */
  readonly setMode: (mode: RequestLogMode) => Promise<void>;
  /** Measures the selected operations once. */
  readonly runOps: () => Promise<OpReport[]>;
  readonly log: (line: string) => void;
}

interface Sample {
  readonly perSecond: number;
  readonly cpuMsPerRequest: number;
}

export interface OpComparison {
  readonly name: string;
  readonly errors: readonly Sample[];
  readonly all: readonly Sample[];
}

/**
 * REQUEST_LOG=compare: the same operations measured with the request log in `errors` (keeps no successful request)
 * and in `all`, alternating within one run for ROUNDS rounds (the order flips every round), so that both modes
 * see the same host load. Returns the operations' reports of the last round and the samples of every round.
 */
export async function compareRequestLog(o: CompareOptions): Promise<{ last: OpReport[]; table: OpComparison[] }> {
  const samples = new Map<string, { errors: Sample[]; all: Sample[] }>();
  let last: OpReport[] = [];
  for (let round = 1; round <= o.rounds; round++) {
    const order: RequestLogMode[] = round % 2 === 1 ? ["errors", "all"] : ["all", "errors"];
    for (const mode of order) {
      await o.setMode(mode);
      o.log(`request log compare: round ${round}/${o.rounds}, request_log ${mode}`);
      last = await o.runOps();
      for (const op of last) {
        const m = op.measurement;
        if (m === undefined) continue;
        const entry = samples.get(op.name) ?? { errors: [], all: [] };
        entry[mode].push({
          perSecond: m.requestsPerSecond,
          cpuMsPerRequest: m.serverCpuMsPerRequest + m.postgresCpuMsPerRequest,
        });
        o.log(
          `  ${op.name} (${mode}): CPU per request Roster ${(m.serverCpuMsPerRequest * 1000).toFixed(0)} µs, ` +
            `PostgreSQL ${(m.postgresCpuMsPerRequest * 1000).toFixed(0)} µs`,
        );
        samples.set(op.name, entry);
      }
    }
  }
  return { last, table: [...samples].map(([name, s]) => ({ name, ...s })) };
}

const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

const pct = (ratio: number): string => `${ratio >= 1 ? "+" : ""}${((ratio - 1) * 100).toFixed(1)} %`;

/**
 * A Markdown table: medians per mode, and the median of the per-round ratios `all ÷ errors` (each ratio compares two
 * measurements taken a few seconds apart, which is what survives a noisy host).
 */
export function formatComparison(table: readonly OpComparison[]): string {
  const lines = [
    "| op | rounds | req/s errors | req/s all | req/s all ÷ errors (median of rounds) | CPU ms/req errors | CPU ms/req all | CPU all ÷ errors |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const op of table) {
    const n = Math.min(op.errors.length, op.all.length);
    const rate = (i: number) => (op.all[i]?.perSecond ?? 0) / (op.errors[i]?.perSecond ?? 1);
    const cpu = (i: number) => (op.all[i]?.cpuMsPerRequest ?? 0) / (op.errors[i]?.cpuMsPerRequest ?? 1);
    const idx = Array.from({ length: n }, (_, i) => i);
    lines.push(
      `| ${op.name} | ${n} | ${median(op.errors.map((s) => s.perSecond)).toFixed(0)} | ` +
        `${median(op.all.map((s) => s.perSecond)).toFixed(0)} | ${pct(median(idx.map(rate)))} | ` +
        `${median(op.errors.map((s) => s.cpuMsPerRequest)).toFixed(3)} | ` +
        `${median(op.all.map((s) => s.cpuMsPerRequest)).toFixed(3)} | ${pct(median(idx.map(cpu)))} |`,
    );
  }
  return lines.join("\n");
}
