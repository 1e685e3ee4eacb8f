import type { CpuReader } from "./cpu.js";
import type { Endpoint, RequestSpec } from "./http.js";
import { type LoadResult, runLoad } from "./load.js";

export interface Measurement extends LoadResult {
  /** CPU of the server under test (Roster, or the ceiling app) per measured request. */
  readonly serverCpuMsPerRequest: number;
  /** CPU of PostgreSQL per measured request. */
  readonly postgresCpuMsPerRequest: number;
  /** CPU of this bench process (load generator and webhook receiver) per measured request. */
  readonly clientCpuMsPerRequest: number;
  /** Whole-machine CPU busy share during the window, 0..1 per core summed over cores. */
  readonly serverCpuCores: number;
  readonly postgresCpuCores: number;
}

export interface MeasureOptions {
  readonly endpoint: Endpoint;
  readonly connections: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  readonly next: (n: number) => RequestSpec;
  readonly serverCpu: CpuReader;
  readonly postgresCpu: CpuReader;
}

/** One closed-loop run with CPU read before and after the measured window. */
export async function measure(options: MeasureOptions): Promise<Measurement> {
  let server = 0;
  let postgres = 0;
  let client = 0;
  const clientCpuMs = () => {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1000;
  };
  const result = await runLoad({
    endpoint: options.endpoint,
    connections: options.connections,
    warmupMs: options.warmupMs,
    durationMs: options.durationMs,
    next: options.next,
    onWindow: (edge) => {
      const sign = edge === "start" ? -1 : 1;
      server += sign * options.serverCpu();
      postgres += sign * options.postgresCpu();
      client += sign * clientCpuMs();
    },
  });
  const perRequest = (ms: number) => (result.requests === 0 ? Number.NaN : ms / result.requests);
  return {
    ...result,
    serverCpuMsPerRequest: perRequest(server),
    postgresCpuMsPerRequest: perRequest(postgres),
    clientCpuMsPerRequest: perRequest(client),
    serverCpuCores: server / result.windowMs,
    postgresCpuCores: postgres / result.windowMs,
  };
}
