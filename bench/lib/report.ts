import type { FeedResult } from "./feed.js";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { BenchConfig } from "./config.js";
import type { Measurement } from "./measure.js";
import type { TargetCheck } from "./targets.js";
import type { WebhookResult } from "./webhook.js";

export interface Ratios {
  readonly requestsPerSecond: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly serverCpuMsPerRequest: number;
  readonly postgresCpuMsPerRequest: number;
}

export interface OpReport {
  readonly name: string;
  readonly describe: string;
  readonly status: "ok" | "unavailable";
  readonly reason?: string;
  readonly note?: string;
  readonly measurement?: Measurement;
  /** Roster ÷ ceiling for each figure (req/s: higher is better; latencies and CPU: lower is better). */
  readonly ratio?: Ratios;
  /** The throughput target for this operation, req/s (docs/performance.md, "Targets"). */
  readonly targetPerSecond?: number;
}

export interface BenchReport {
  readonly date: string;
  readonly machine: { nproc: number; memoryMiB: number; cpu: string; node: string; platform: string };
  readonly config: Omit<BenchConfig, "databaseUrl">;
  readonly database: string;
  readonly postgresCpuScope: string;
  readonly loadAverage: { readonly start: number[]; readonly end: number[] };
  readonly seeding: Record<string, unknown>;
  /**
   * The ceiling, measured before the operations and after them (a drift between the two says the machine's load
   * changed during the run); every ratio is to the better of the two, `ceiling`.
   */
  readonly ceilingStart: Measurement;
  readonly ceilingEnd: Measurement;
  readonly ceiling: Measurement;
  readonly ceilingNote: string;
  readonly ops: OpReport[];
  readonly webhook: WebhookResult | { status: "skipped" };
  /** One consumer reading the events feed from the oldest event, page_size 1000 (after seeding). */
  readonly feed: FeedResult;
  /** The webhook phases' figures ÷ the ceiling's. */
  readonly webhookRatios?: { readonly without: Ratios | undefined; readonly with: Ratios | undefined };
  readonly targets: TargetCheck[];
  readonly rosterErrorLines: string[];
  readonly totalSeconds: number;
}

/** The throughput targets (docs/performance.md, "Targets"): req/s at 16 connections with 10 000 users. */
export const TARGETS: Readonly<Record<string, number>> = {
  get: 4800,
  filter: 3200,
  create: 1000,
  patch: 1900,
  put: 1800,
  list_1: 750,
  list_4901: 500,
};

export const WEBHOOK_TARGETS = { eventsPerSecond: 2000, addedP99Ms: 5 };

/** The better of the two ceiling measurements (more req/s): the machine's best this run. */
export function betterCeiling(start: Measurement, end: Measurement): Measurement {
  return end.requestsPerSecond > start.requestsPerSecond ? end : start;
}

export function withRatio(op: OpReport, ceiling: Measurement): OpReport {
  const ratio = op.measurement === undefined ? undefined : ratiosTo(op.measurement, ceiling);
  return ratio === undefined ? op : { ...op, ratio };
}

export function ratiosTo(m: Measurement, ceiling: Measurement | undefined): Ratios | undefined {
  if (ceiling === undefined || ceiling.requests === 0) return undefined;
  return {
    requestsPerSecond: m.requestsPerSecond / ceiling.requestsPerSecond,
    p50: m.p50 / ceiling.p50,
    p90: m.p90 / ceiling.p90,
    p99: m.p99 / ceiling.p99,
    serverCpuMsPerRequest: m.serverCpuMsPerRequest / ceiling.serverCpuMsPerRequest,
    postgresCpuMsPerRequest: m.postgresCpuMsPerRequest / ceiling.postgresCpuMsPerRequest,
  };
}

export async function writeReport(dir: string, report: BenchReport): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${report.date.replaceAll(":", "-").replace(/\.\d+Z$/, "Z")}.json`);
  await writeFile(file, `${JSON.stringify(report, jsonNumbers, 2)}\n`);
  return file;
}

/** NaN and Infinity become null in JSON; other numbers keep three decimals at most. */
function jsonNumbers(_key: string, value: unknown): unknown {
  if (typeof value !== "number") return value;
  if (!Number.isFinite(value)) return null;
  return Number.isInteger(value) ? value : Math.round(value * 1000) / 1000;
}
