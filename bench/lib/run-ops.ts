import type { BenchConfig } from "./config.js";
import type { CpuReader } from "./cpu.js";
import { describeReply, send } from "./http.js";
import { type Measurement, measure } from "./measure.js";
import { OPERATIONS, type OpContext } from "./ops.js";
import { type OpReport, TARGETS } from "./report.js";
import { isMissingEndpoint } from "./seed.js";

export interface RunOpsOptions {
  readonly config: BenchConfig;
  readonly ctx: OpContext;
  readonly rosterCpu: CpuReader;
  readonly postgresCpu: CpuReader;
  readonly log: (line: string) => void;
  /** Throws when Roster is gone, so a crash stops the run instead of filling the table with socket errors. */
  readonly assertAlive: () => void;
}

/**
 * Drives each selected operation in turn. An operation whose endpoint answers 404/405 to a probe (its feature has
 * not landed), or whose seeded data is missing, is reported as unavailable instead of measured.
 */
export async function runOperations(o: RunOpsOptions): Promise<OpReport[]> {
  const { ctx } = o;
  const reports: OpReport[] = [];
  for (const def of OPERATIONS.filter((d) => o.config.ops.includes(d.name))) {
    const target = TARGETS[def.name];
    const base = {
      name: def.name,
      describe: def.describe,
      ...(target === undefined ? {} : { targetPerSecond: target }),
    };
    const unavailable = (reason: string) => {
      reports.push({ ...base, status: "unavailable", reason });
      o.log(`${def.name}: unavailable (${reason})`);
    };
    const missing =
      (def.needs.includes("users") ? ctx.usersUnavailable : undefined) ??
      (def.needs.includes("groups") ? ctx.groupsUnavailable : undefined);
    if (missing !== undefined) {
      unavailable(`needs seeded data: ${missing}`);
      continue;
    }
    const prepared = await def.prepare(ctx);
    if (prepared.kind === "unavailable") {
      unavailable(prepared.reason);
      continue;
    }
    const probeSpec = prepared.next(-1);
    const probe = await send(ctx.pool, ctx.target, probeSpec);
    if (isMissingEndpoint(probe.status)) {
      unavailable(
        `${probeSpec.method} ${probeSpec.path.replace(ctx.target.base, "")} answered ${describeReply(probe)}`,
      );
      continue;
    }
    const probeNote = probe.status > 299 ? `probe answered ${describeReply(probe)}` : undefined;
    const note = [prepared.note, probeNote].filter((s) => s !== undefined).join("; ");
    const measurement = await measure({
      endpoint: ctx.target,
      connections: o.config.connections,
      warmupMs: o.config.warmupMs,
      durationMs: o.config.durationMs,
      next: prepared.next,
      serverCpu: o.rosterCpu,
      postgresCpu: o.postgresCpu,
    });
    reports.push({ ...base, status: "ok", ...(note === "" ? {} : { note }), measurement });
    o.log(`${def.name}: ${summaryLine(measurement)}`);
    o.assertAlive();
  }
  return reports;
}

export function summaryLine(m: Measurement): string {
  return (
    `${m.requestsPerSecond.toFixed(0)} req/s, p50 ${m.p50.toFixed(2)} ms, p99 ${m.p99.toFixed(2)} ms, ` +
    `${m.errors} errors${m.errorSamples.length > 0 ? ` (${m.errorSamples[0]})` : ""}`
  );
}
