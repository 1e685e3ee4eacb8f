import { startChild } from "./child.js";
import type { Cleanup } from "./cleanup.js";
import type { BenchConfig } from "./config.js";
import { type CpuReader, processCpuMs } from "./cpu.js";
import type { RequestSpec } from "./http.js";
import { type Measurement, measure } from "./measure.js";
import { pick } from "./ops.js";
import type { Seeded } from "./seed.js";

export interface Ceiling {
  /** What the ceiling request does, for the table. */
  readonly note: string;
  /** One measurement; `warmupMs` overrides the configured warm-up (the first one needs a longer one). */
  measure(warmupMs?: number): Promise<Measurement>;
}

export interface CeilingOptions {
  readonly root: string;
  readonly config: BenchConfig;
  readonly databaseUrl: string;
  readonly organizationId: string;
  readonly users: readonly Seeded[];
  readonly postgresCpu: CpuReader;
}

/**
 * The in-run ceiling: the same client settings against a bare Fastify route doing one primary-key SELECT
 * of a seeded identity (the organization row when no user could be seeded), in its own process like Roster.
 */
export async function startCeiling(options: CeilingOptions, cleanup: Cleanup): Promise<Ceiling> {
  const child = await startChild({
    name: "ceiling app",
    script: "bench/ceiling/server.ts",
    cwd: options.root,
    env: { ...process.env, BENCH_CEILING_DATABASE_URL: options.databaseUrl },
    urlFrom: (line) => /ceiling listening at (http:\/\/\S+)/.exec(line)?.[1],
    startTimeoutMs: 60_000,
  });
  cleanup.add("ceiling app", () => child.stop());
  const users = options.users;
  const next =
    users.length > 0
      ? (n: number): RequestSpec => ({ method: "GET", path: `/identities/${pick(users, n).id}` })
      : (): RequestSpec => ({ method: "GET", path: `/organizations/${options.organizationId}` });
  const table = users.length > 0 ? "identities" : "organizations (no user seeded)";
  return {
    note: `bare Fastify + one PK SELECT on ${table}; CPU column = the ceiling app`,
    measure: (warmupMs = options.config.warmupMs) =>
      measure({
        endpoint: { origin: child.url, headers: {} },
        connections: options.config.connections,
        warmupMs,
        durationMs: options.config.durationMs,
        next,
        serverCpu: () => processCpuMs(child.pid),
        postgresCpu: options.postgresCpu,
      }),
  };
}
