import type { ManualClock } from "../../src/platform/clock.js";
import type { Webhooks, WebhooksOptions } from "../../src/webhooks/index.js";
import { verifyWebhookSignature } from "../../src/webhooks/verify.js";
import type { TestApp, TestDatabase } from "./app.js";
import { type SeededClient, seedClient } from "./seed.js";
import { type ReceivedWebhook, startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js";
import { createWebhookTestApp } from "./webhooks.js";

export const E2E_WEBHOOK_SECRET = "whsec_e2e_0123456789abcdef";
export const TENANT = "acme-tenant";
export const PRODUCT = "crm";

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

/**
 * The whole stack as a customer runs it: the app with the real outbox sink and dispatcher (driven by hand), a SCIM
 * client whose webhook points at a real local HTTP receiver.
 */
export interface E2E {
  readonly t: TestApp;
  readonly webhooks: Webhooks;
  readonly database: TestDatabase;
  readonly receiver: WebhookReceiver;
  readonly client: SeededClient;
  /**
   * Runs the dispatcher until nothing is claimable and returns what reached the receiver since the last call, in
   * arrival order. Throws if any request is not a signed, well-formed webhook.
   */
  deliver(): Promise<Delivery[]>;
  /** Another SCIM client (organization) on the same app, webhook to the same receiver. */
  seed(client?: Record<string, unknown>): Promise<SeededClient>;
  close(): Promise<void>;
}

export async function startE2E(
  options: {
    client?: Record<string, unknown>;
    database?: TestDatabase;
    clock?: ManualClock;
    webhooks?: Partial<WebhooksOptions>;
    receiver?: WebhookReceiver;
  } = {},
): Promise<E2E> {
  const receiver = options.receiver ?? (await startWebhookReceiver());
  const w = await createWebhookTestApp({
    ...(options.database === undefined ? {} : { database: options.database }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.webhooks === undefined ? {} : { webhooks: options.webhooks }),
  });
  const seed = (client: Record<string, unknown> = {}) =>
    seedClient(w.t, {
      tenant: TENANT,
      product: PRODUCT,
      webhook: { url: receiver.url, secret: E2E_WEBHOOK_SECRET },
      ...client,
    });
  const client = await seed(options.client);
  let seen = 0;
  return {
    t: w.t,
    webhooks: w.webhooks,
    database: w.database,
    receiver,
    client,
    seed,
    async deliver() {
      await w.webhooks.dispatcher.drain();
      const fresh = receiver.received.slice(seen);
      seen = receiver.received.length;
      return fresh.map((r) => checkedDelivery(r, w.t.clock.now().getTime()));
    },
    async close() {
      await w.webhooks.dispatcher.stop();
      await w.t.close();
      if (options.database === undefined) await w.database.close();
      if (options.receiver === undefined) await receiver.close();
    },
  };
}

/** Verifies a received request as a receiver would (exported helper, raw bytes) and parses it. */
export function checkedDelivery(r: ReceivedWebhook, nowMs = Date.now()): Delivery {
  const header = r.headers["service-signature"];
  if (
    !verifyWebhookSignature(E2E_WEBHOOK_SECRET, typeof header === "string" ? header : undefined, r.rawBody, {
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
