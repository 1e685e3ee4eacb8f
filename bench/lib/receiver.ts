import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceiverCounts {
  readonly deliveries: number;
  /** Distinct `webhook-id` headers (every delivery carries one, so receivers can dedupe). */
  readonly distinctIds: number;
  /** performance.now() of the first and last delivery since the last reset. */
  readonly firstAt: number | undefined;
  readonly lastAt: number | undefined;
  readonly events: Record<string, number>;
}

export interface WebhookReceiver {
  readonly url: string;
  counts(): ReceiverCounts;
  reset(): void;
  close(): Promise<void>;
}

/** A local webhook endpoint that answers 200 at once and counts what it got. */
export async function startReceiver(): Promise<WebhookReceiver> {
  let deliveries = 0;
  let ids = new Set<string>();
  let firstAt: number | undefined;
  let lastAt: number | undefined;
  let events: Record<string, number> = {};

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
      const now = performance.now();
      deliveries++;
      firstAt ??= now;
      lastAt = now;
      const id = req.headers["webhook-id"];
      if (typeof id === "string") ids.add(id);
      const kind = eventKind(Buffer.concat(chunks).toString("utf8"));
      events[kind] = (events[kind] ?? 0) + 1;
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/hook`,
    counts: () => ({ deliveries, distinctIds: ids.size, firstAt, lastAt, events: { ...events } }),
    reset: () => {
      deliveries = 0;
      ids = new Set();
      firstAt = undefined;
      lastAt = undefined;
      events = {};
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function eventKind(body: string): string {
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed === "object" && parsed !== null && "event" in parsed && typeof parsed.event === "string") {
      return parsed.event;
    }
  } catch {
    // counted as unknown below
  }
  return "unknown";
}

/** Waits until no delivery arrived for one second (at most `limitMs`), so one phase's events don't count in the next. */
export async function waitQuiet(receiver: WebhookReceiver, limitMs: number): Promise<void> {
  const deadline = performance.now() + limitMs;
  let last = receiver.counts().deliveries;
  while (performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = receiver.counts().deliveries;
    if (now === last) return;
    last = now;
  }
}
