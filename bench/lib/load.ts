import type { Dispatcher } from "undici";
import { openPool, type Endpoint, type RequestSpec, requestOptions } from "./http.js";
import { type LatencySummary, summarize } from "./stats.js";

export interface LoadOptions {
  readonly endpoint: Endpoint;
  readonly connections: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  /** The n-th request of the run (warm-up included): each call should target a different resource. */
  readonly next: (n: number) => RequestSpec;
  /** Called (synchronously) when the measured window opens and closes: CPU snapshots. */
  readonly onWindow?: (edge: "start" | "end") => void;
}

export interface LoadResult extends LatencySummary {
  /** Responses completed inside the measured window, errors included. */
  readonly requests: number;
  readonly requestsPerSecond: number;
  /** Non-2xx answers and socket errors inside the window. */
  readonly errors: number;
  readonly statusCounts: Record<string, number>;
  /** Up to five distinct error descriptions (status or socket error) with the first body seen. */
  readonly errorSamples: string[];
  /** 2xx answers over the whole run, warm-up and in-flight stragglers included (writes that really happened). */
  readonly okTotal: number;
  readonly windowMs: number;
  readonly bytesRead: number;
}

/**
 * A closed loop: `connections` workers, each sending its next request as soon as the previous answer is read in
 * full. Only requests that start and complete inside the measured window count.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const pool = openPool(options.endpoint.origin, options.connections);
  const latencies: number[] = [];
  const statusCounts: Record<string, number> = {};
  const errorSamples = new Map<string, string>();
  let counter = 0;
  let errors = 0;
  let okTotal = 0;
  let bytesRead = 0;

  const t0 = performance.now();
  const windowStart = t0 + options.warmupMs;
  const windowEnd = windowStart + options.durationMs;
  let windowOpen = false;
  const openWindow = () => {
    if (windowOpen) return;
    windowOpen = true;
    options.onWindow?.("start");
  };
  let windowClosed = false;
  const closeWindow = () => {
    if (windowClosed) return;
    openWindow();
    windowClosed = true;
    options.onWindow?.("end");
  };
  const windowTimer = setTimeout(openWindow, options.warmupMs);
  const closeTimer = setTimeout(closeWindow, options.warmupMs + options.durationMs);

  const worker = async () => {
    for (let now = performance.now(); now < windowEnd; now = performance.now()) {
      const spec = options.next(counter++);
      const started = performance.now();
      let status: string;
      let failed: boolean;
      let sample = "";
      try {
        const res = await exchange(pool, requestOptions(options.endpoint, spec));
        bytesRead += res.bytes;
        status = String(res.statusCode);
        failed = res.statusCode < 200 || res.statusCode > 299;
        if (failed) sample = res.head;
        else okTotal++;
      } catch (e) {
        status = `socket: ${e instanceof Error ? e.message : String(e)}`;
        failed = true;
      }
      const ended = performance.now();
      if (started < windowStart || ended > windowEnd) continue;
      latencies.push(ended - started);
      statusCounts[status] = (statusCounts[status] ?? 0) + 1;
      if (failed) {
        errors++;
        if (errorSamples.size < 5 && !errorSamples.has(status)) errorSamples.set(status, sample);
      }
    }
  };

  try {
    await Promise.all(Array.from({ length: options.connections }, worker));
  } finally {
    clearTimeout(windowTimer);
    clearTimeout(closeTimer);
    closeWindow();
    await pool.close();
  }
  const windowMs = options.durationMs;
  return {
    ...summarize(latencies),
    requests: latencies.length,
    requestsPerSecond: (latencies.length * 1000) / windowMs,
    errors,
    statusCounts,
    errorSamples: [...errorSamples].map(([status, body]) => (body === "" ? status : `${status}: ${body}`)),
    okTotal,
    windowMs,
    bytesRead,
  };
}

/** What the load generator keeps of an answer: its status, its size, and the start of its body. */
interface Exchanged {
  readonly statusCode: number;
  readonly bytes: number;
  /** Up to 300 bytes of the body, as text. */
  readonly head: string;
}

const HEAD_BYTES = 300;

/**
 * One request on undici's dispatcher, the answer read as it arrives: the load generator shares the machine's cores
 * with the servers it measures, and undici's `request` makes a readable stream and a buffer of every body, which
 * cost it about as much CPU per request as Roster spends on a GET. The connection, its reuse and HTTP parsing stay
 * undici's.
 */
function exchange(pool: Dispatcher, options: Dispatcher.DispatchOptions): Promise<Exchanged> {
  return new Promise((resolve, reject) => {
    let statusCode = 0;
    let bytes = 0;
    // Only a failed answer's body is kept (its start), for the error samples.
    let failed = false;
    const head: Buffer[] = [];
    let kept = 0;
    pool.dispatch(options, {
      // Its presence tells undici this handler speaks its current interface (the onResponse* callbacks).
      onRequestStart() {},
      onResponseStart(_controller, status) {
        statusCode = status;
        failed = status < 200 || status > 299;
      },
      onResponseData(_controller, chunk) {
        bytes += chunk.length;
        if (failed && kept < HEAD_BYTES) {
          head.push(chunk);
          kept += chunk.length;
        }
      },
      onResponseEnd() {
        resolve({ statusCode, bytes, head: Buffer.concat(head).toString("utf8", 0, HEAD_BYTES) });
      },
      onResponseError(_controller, error) {
        reject(error);
      },
    });
  });
}
