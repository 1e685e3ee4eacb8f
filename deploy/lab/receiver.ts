/**
 * The lab's webhook receiver: listens on a free port, verifies both signatures of every delivery (Standard Webhooks
 * `webhook-signature` with the `standardwebhooks` package, and `Service-Signature` with Roster's receiver-side
 * helper), records each verified delivery, and answers anything else (another path or method, a missing header, a
 * body that is not an event) with a 4xx that it counts instead of crashing.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { verifyWebhookSignature } from "../../src/webhooks/verify.js";

export interface WebhookBody {
  readonly id: string;
  readonly event: string;
  readonly created_at?: string;
  readonly data: Record<string, unknown>;
}

export type Verdict =
  | { readonly kind: "delivery"; readonly webhookId: string; readonly body: WebhookBody }
  | { readonly kind: "bad signature"; readonly reason: string }
  | { readonly kind: "ignored"; readonly reason: string };

export interface IncomingWebhook {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}

const one = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? undefined : value);

/**
 * What one request is, given the secrets of the paths that expect deliveries. A request to a known path with the
 * signature headers is a delivery only when both signatures verify over the exact bytes received and the body is an
 * event whose `id` is its `webhook-id`; anything that is not a delivery attempt at all is "ignored".
 */
export function classify(request: IncomingWebhook, secrets: ReadonlyMap<string, string>, now = Date.now()): Verdict {
  const secret = secrets.get(request.path);
  if (secret === undefined) return { kind: "ignored", reason: `unknown path ${request.path.slice(0, 60)}` };
  if (request.method !== "POST") return { kind: "ignored", reason: `method ${request.method}` };
  const webhookId = one(request.headers["webhook-id"]);
  const timestamp = one(request.headers["webhook-timestamp"]);
  const standard = one(request.headers["webhook-signature"]);
  const service = one(request.headers["service-signature"]);
  if (webhookId === undefined || timestamp === undefined || standard === undefined || service === undefined) {
    return { kind: "ignored", reason: "not a signed delivery (a signature header is missing)" };
  }
  const raw = request.body.toString("utf8");
  try {
    new Webhook(secret).verify(raw, {
      "webhook-id": webhookId,
      "webhook-timestamp": timestamp,
      "webhook-signature": standard,
    });
  } catch (e) {
    return { kind: "bad signature", reason: `webhook-signature: ${(e as Error).message}` };
  }
  if (!verifyWebhookSignature(secret, service, request.body, { now })) {
    return { kind: "bad signature", reason: "Service-Signature does not verify" };
  }
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return { kind: "bad signature", reason: "signed body is not JSON" };
  }
  const event = body as Partial<WebhookBody> | null;
  if (
    typeof event !== "object" ||
    event === null ||
    typeof event.id !== "string" ||
    typeof event.event !== "string" ||
    typeof event.data !== "object" ||
    event.data === null
  ) {
    return { kind: "bad signature", reason: "signed body is not an event" };
  }
  if (event.id !== webhookId) return { kind: "bad signature", reason: "body id differs from webhook-id" };
  return { kind: "delivery", webhookId, body: event as WebhookBody };
}

export interface Delivery {
  readonly webhookId: string;
  readonly body: WebhookBody;
  /** Arrival, unix ms. */
  readonly at: number;
}

export interface Receiver {
  readonly port: number;
  /** Registers a path (e.g. `/hook/failover`) and the secret its deliveries are signed with. */
  expect(path: string, secret: string): void;
  /** Verified deliveries per path, in arrival order (repeats included). */
  deliveries(path: string): readonly Delivery[];
  readonly badSignatures: { path: string; reason: string }[];
  readonly ignored: Map<string, number>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const secrets = new Map<string, string>();
  const byPath = new Map<string, Delivery[]>();
  const badSignatures: { path: string; reason: string }[] = [];
  const ignored = new Map<string, number>();
  const ignore = (reason: string): void => void ignored.set(reason, (ignored.get(reason) ?? 0) + 1);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("error", () => ignore("request stream error"));
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size <= 1_000_000) chunks.push(c);
    });
    req.on("end", () => {
      try {
        const path = (req.url ?? "/").split("?")[0] ?? "/";
        const verdict =
          size > 1_000_000
            ? ({ kind: "ignored", reason: "body over 1 MB" } as const)
            : classify({ method: req.method ?? "", path, headers: req.headers, body: Buffer.concat(chunks) }, secrets);
        if (verdict.kind === "delivery") {
          const list = byPath.get(path) ?? [];
          list.push({ webhookId: verdict.webhookId, body: verdict.body, at: Date.now() });
          byPath.set(path, list);
          res.writeHead(204).end();
        } else if (verdict.kind === "bad signature") {
          badSignatures.push({ path, reason: verdict.reason });
          res.writeHead(401).end();
        } else {
          ignore(verdict.reason);
          res.writeHead(404).end();
        }
      } catch (e) {
        ignore(`receiver error: ${(e as Error).message}`);
        if (!res.headersSent) res.writeHead(500);
        res.end();
      }
    });
  });
  // A request that is not HTTP, and a sender's keep-alive connection reset (an instance killed with -9).
  server.on("clientError", (e: NodeJS.ErrnoException, socket) => {
    ignore(`connection error ${e.code ?? e.message}`);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    expect: (path, secret) => void secrets.set(path, secret),
    deliveries: (path) => byPath.get(path) ?? [],
    badSignatures,
    ignored,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
