import { createServer, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { verifyWebhookSignature } from "../../src/webhooks/verify.js";
import { WEBHOOK_SECRET } from "./constants.js";

/** One request as the receiver saw it: the raw body bytes, before any JSON parsing. */
export interface ReceivedWebhook {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: Buffer;
  /** rawBody parsed as JSON. */
  readonly json: Record<string, unknown>;
}

/**
 * How to answer: a status code, a status after a delay, a status once a promise settles (a gate the test opens), or
 * `hang` (never answer: exercises the timeout).
 */
export type ReceiverAnswer =
  | number
  | { readonly status: number; readonly delayMs: number }
  | { readonly status: number; readonly after: Promise<unknown> }
  | "hang";

/**
 * The event kinds a receiver knows: `directory` — the directory's changes (`user.*`, `group.*`) and `webhook.test`,
 * what most tests count; `all` — every kind. A request of a kind it does not know is answered 200 and not recorded,
 * as a receiver written against the documented kinds ignores new ones (docs/webhooks.md).
 */
export type KnownKinds = "directory" | "all";

const DIRECTORY_KIND = /^(user\.|group\.|webhook\.test$)/;

export interface WebhookReceiver {
  /** http://127.0.0.1:<port>/hook */
  readonly url: string;
  /** The requests of the kinds it knows (see KnownKinds), in arrival order. */
  readonly received: ReceivedWebhook[];
  /** Which kinds to record from now on (default `directory`). */
  knows(kinds: KnownKinds): void;
  /** Answer with this from now on (default 200); a function decides per request. */
  answer(with_: ReceiverAnswer | ((req: ReceivedWebhook) => ReceiverAnswer)): void;
  /** Resolves once `count` requests in all have arrived (since the last reset); rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  reset(): void;
  close(): Promise<void>;
}

/** A real local HTTP receiver on 127.0.0.1 and a free port that records every request it gets. */
export async function startWebhookReceiver(known: KnownKinds = "directory"): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let knows = known;
  let decide: (req: ReceivedWebhook) => ReceiverAnswer = () => 200;
  const hanging = new Set<ServerResponse>();
  const waiters = new Set<{ count: number; resolve: () => void }>();
  const notify = () => {
    for (const w of waiters) {
      if (received.length >= w.count) {
        waiters.delete(w);
        w.resolve();
      }
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks);
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(rawBody.toString("utf8")) as Record<string, unknown>;
      } catch {
        // recorded as is; tests look at rawBody
      }
      const hook: ReceivedWebhook = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        rawBody,
        json,
      };
      if (knows === "directory" && typeof json.event === "string" && !DIRECTORY_KIND.test(json.event)) {
        res.writeHead(200, { "content-type": "text/plain" }).end("ignored");
        return;
      }
      received.push(hook);
      notify();
      const answer = decide(hook);
      if (answer === "hang") {
        hanging.add(res);
        return;
      }
      const send = (status: number) => {
        if (!res.destroyed) res.writeHead(status, { "content-type": "text/plain" }).end("ok");
      };
      if (typeof answer === "number") send(answer);
      else if ("after" in answer) void answer.after.finally(() => send(answer.status));
      else setTimeout(() => send(answer.status), answer.delayMs);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    knows(kinds) {
      knows = kinds;
    },
    answer(with_) {
      decide = typeof with_ === "function" ? with_ : () => with_;
    },
    waitFor(count, timeoutMs = 10_000) {
      if (received.length >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`receiver: ${received.length} of ${count} requests after ${timeoutMs} ms`));
        }, timeoutMs);
        const waiter = {
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
        waiters.add(waiter);
      });
    },
    reset() {
      received.length = 0;
      decide = () => 200;
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A delivered webhook, its signature checked, with its body parsed. */
export interface Delivery {
  readonly webhookId: string;
  readonly event: string;
  readonly body: {
    readonly directory_id: string;
    readonly event: string;
    readonly tenant: string;
    readonly product: string;
    readonly id: string;
    readonly created_at: string;
    readonly data: Record<string, unknown>;
  };
  readonly received: ReceivedWebhook;
}

/** Verifies a received request as a receiver would (exported helper, raw bytes) and parses it. */
export function checkedDelivery(r: ReceivedWebhook, nowMs = Date.now()): Delivery {
  const header = r.headers["service-signature"];
  if (
    !verifyWebhookSignature(WEBHOOK_SECRET, typeof header === "string" ? header : undefined, r.rawBody, {
      now: nowMs,
    })
  ) {
    throw new Error(`bad signature on ${r.rawBody.toString("utf8")}`);
  }
  if (r.method !== "POST" || r.headers["content-type"] !== "application/json") {
    throw new Error(`not a JSON POST: ${r.method} ${String(r.headers["content-type"])}`);
  }
  const webhookId = r.headers["webhook-id"];
  if (typeof webhookId !== "string" || webhookId === "") throw new Error("no webhook-id header");
  const body = JSON.parse(r.rawBody.toString("utf8")) as Delivery["body"];
  return { webhookId, event: body.event, body, received: r };
}

/** The event kinds of deliveries, in order. */
export const kinds = (ds: readonly Delivery[]): string[] => ds.map((d) => d.event);

/** What a plain receiver answers: a status, headers and a body. */
export interface PlainAnswer {
  readonly status: number;
  readonly headers?: OutgoingHttpHeaders;
  readonly body?: string;
}

/** A receiver that records nothing: its answer is the point (what the event log keeps of it, where a redirect goes). */
export interface PlainReceiver {
  /** http://127.0.0.1:<port>/hook */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** A local HTTP server on 127.0.0.1 that reads each request to its end, then answers what `answer()` gives. */
export async function startPlainReceiver(answer: () => PlainAnswer): Promise<PlainReceiver> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const { status, headers, body } = answer();
      res.writeHead(status, headers).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
