import { type Dispatcher, Pool } from "undici";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** One HTTP request as the load generator sends it; `path` includes the query string. */
export interface RequestSpec {
  readonly method: Method;
  readonly path: string;
  readonly body?: string;
}

export interface Endpoint {
  readonly origin: string;
  /** Sent with every request (authorization, content type). */
  readonly headers: Readonly<Record<string, string>>;
}

export interface Reply {
  readonly status: number;
  readonly text: string;
}

const TIMEOUT_MS = 30_000;

/** A keep-alive pool of exactly `connections` sockets, no pipelining: a closed loop of that many clients. */
export function openPool(origin: string, connections: number): Pool {
  return new Pool(origin, {
    connections,
    pipelining: 1,
    headersTimeout: TIMEOUT_MS,
    bodyTimeout: TIMEOUT_MS,
    keepAliveTimeout: 60_000,
  });
}

export function requestOptions(endpoint: Endpoint, spec: RequestSpec): Dispatcher.RequestOptions {
  return {
    method: spec.method,
    path: spec.path,
    headers: endpoint.headers,
    ...(spec.body === undefined ? {} : { body: spec.body }),
  };
}

/** One request whose answer is read in full (set-up, probes, seeding). */
export async function send(pool: Dispatcher, endpoint: Endpoint, spec: RequestSpec): Promise<Reply> {
  const res = await pool.request(requestOptions(endpoint, spec));
  return { status: res.statusCode, text: await res.body.text() };
}

/** The JSON object of a reply, or an empty object when the body is not one. */
export function jsonOf(reply: Reply): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(reply.text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

export function describeReply(reply: Reply): string {
  const body = jsonOf(reply);
  const detail = [body.scimType, body.detail, isObject(body.error) ? body.error.message : undefined]
    .filter((v) => typeof v === "string" && v !== "")
    .join(": ");
  return detail === "" ? `HTTP ${reply.status}` : `HTTP ${reply.status} (${detail})`;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Runs `task` over `items` with at most `concurrency` in flight; results in input order. */
export async function mapBounded<T, R>(
  items: readonly T[],
  concurrency: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) {
      results[i] = await task(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}
