import { performance } from "node:perf_hooks";
import { Agent, fetch } from "undici";
import { SIGNATURE_HEADER, signatureHeader } from "./signing.js";

export interface DeliveryRequest {
  readonly url: string;
  /** The exact body: it is signed and sent as these bytes. */
  readonly body: string;
  readonly secret: string;
  /** The event id; receivers dedupe on it (the same on a re-send of the same event). */
  readonly webhookId: string;
  /** Unix milliseconds for `t=` of the signature (from the injected clock). */
  readonly timestampMs: number;
}

export interface DeliveryResult {
  /** Spec 6: success = a 2xx answer. */
  readonly success: boolean;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
}

/** Sends one signed webhook request and reports the outcome; never throws. */
export interface WebhookSender {
  send(request: DeliveryRequest): Promise<DeliveryResult>;
}

export interface HttpSenderOptions {
  /** ROSTER_WEBHOOK_TIMEOUT_MS: the whole exchange, connect to last byte. */
  readonly timeoutMs: number;
  /** Keep-alive connections per origin. */
  readonly connectionsPerOrigin?: number;
}

export const USER_AGENT = "Roster-Webhooks/1";

/** undici fetch over a keep-alive agent; redirects are not followed (a 3xx is a failed delivery). */
export class HttpWebhookSender implements WebhookSender {
  readonly #timeoutMs: number;
  readonly #agent: Agent;

  constructor(options: HttpSenderOptions) {
    this.#timeoutMs = options.timeoutMs;
    this.#agent = new Agent({ connections: options.connectionsPerOrigin ?? 64, keepAliveTimeout: 10_000 });
  }

  async send(request: DeliveryRequest): Promise<DeliveryResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const body = request.body;
    try {
      const res = await fetch(request.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          [SIGNATURE_HEADER]: signatureHeader(request.secret, request.timestampMs, body),
          "webhook-id": request.webhookId,
          "user-agent": USER_AGENT,
        },
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(this.#timeoutMs),
        dispatcher: this.#agent,
      });
      // Drain the answer so the connection goes back to the pool; its content is not kept.
      await res.arrayBuffer().catch(() => undefined);
      const success = res.status >= 200 && res.status < 300;
      return { success, statusCode: res.status, error: success ? null : `HTTP ${res.status}`, durationMs: elapsed() };
    } catch (e) {
      return { success: false, statusCode: null, error: describeFailure(e, this.#timeoutMs), durationMs: elapsed() };
    }
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}

/** A short reason without request details (URLs may carry tokens; headers carry the signature). */
export function describeFailure(e: unknown, timeoutMs: number): string {
  const err = e instanceof Error ? e : new Error(String(e));
  if (err.name === "TimeoutError" || err.name === "AbortError") return `timeout after ${timeoutMs} ms`;
  const cause = err.cause;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    if (cause.name === "TimeoutError") return `timeout after ${timeoutMs} ms`;
    return typeof code === "string" ? `connection error: ${code}` : `connection error: ${cause.message}`;
  }
  return `request failed: ${err.message}`;
}
