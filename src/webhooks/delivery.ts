import type { Clock } from "../platform/clock.js";
import type { Logger } from "../platform/logger.js";
import { attemptId } from "./attempt-id.js";
import { type AttemptRecord, outcomeOf } from "./event-log-repo.js";
import type { ClaimedEvent } from "./outbox-claim-repo.js";
import type { Finished } from "./outbox-repo.js";
import type { DeliveryResult, WebhookSender } from "./sender.js";

/**
 * An event whose own attempts were interrupted this many times (each a crash of the dispatcher sending it) is given
 * up, so a poisonous event cannot crash-loop every instance; crashes while other events were sent never count.
 */
export const MAX_INTERRUPTED = 10;
/**
 * With `webhook.retry = "backoff"`: the waits before the 2nd … 8th attempt of a failed delivery (Svix's schedule:
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), each ±10 % so that retries of a burst spread out.
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];
const RETRY_JITTER = 0.1;
/** Opened webhook secrets kept in memory (by sealed value, so a rotated secret is a new entry); then cleared. */
const MAX_OPENED_SECRETS = 256;

export interface DelivererOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly sender: WebhookSender;
  /** Decrypts a sealed webhook secret (SecretBox); only to sign. */
  readonly openSecret: (sealed: string) => string;
}

/**
 * One attempt of one claimed event: signs and sends it (or skips it when sending cannot help), decides whether a
 * failure is retried, and returns the outcome for the dispatcher's group commit. Knows nothing of claims or leases.
 */
export class Deliverer {
  readonly #o: DelivererOptions;
  /** Sealed secret → secret: opening one (AES-GCM) per event was a fifth of the dispatcher's CPU per event. */
  readonly #opened = new Map<string, string>();

  constructor(options: DelivererOptions) {
    this.#o = options;
  }

  /** Sends one event (its attempt already marked started) and returns its outcome, to record. */
  async deliver(event: ClaimedEvent): Promise<Finished> {
    const attemptedAt = this.#o.clock.now();
    const result = await this.#attempt(event, attemptedAt.getTime());
    const wait = result.success || result.skipped === true ? undefined : retryWait(event);
    const retryAt = wait === undefined ? undefined : new Date(attemptedAt.getTime() + wait);
    if (!result.success) {
      this.#o.logger.warn(
        { clientId: event.clientId, eventId: event.id, status: result.statusCode, error: result.error, retryAt },
        retryAt === undefined ? "webhook delivery failed (not retried)" : "webhook delivery failed (retried later)",
      );
    }
    const attempt: AttemptRecord | null = event.logWebhookEvents
      ? {
          id: attemptId(attemptedAt.getTime()),
          event_id: event.id,
          client_id: event.clientId,
          organization_id: event.organizationId,
          event: event.event,
          payload: event.body,
          ...outcomeOf(result),
          resend: false,
          attempted_at: attemptedAt,
          attempt: event.attempt,
          state: result.success ? "delivered" : retryAt === undefined ? "failed" : "retrying",
          next_attempt_time: retryAt ?? null,
        }
      : null;
    return { event, attempt, retryAt };
  }

  async #attempt(event: ClaimedEvent, timestampMs: number): Promise<DeliveryResult & { skipped?: true }> {
    // Not sent at all: retrying would not help (configuration, or given up).
    const skipped = (error: string): DeliveryResult & { skipped: true } => ({
      success: false,
      statusCode: null,
      error,
      durationMs: 0,
      skipped: true,
    });
    if (event.interrupted >= MAX_INTERRUPTED) {
      return skipped(`given up: delivery interrupted ${event.interrupted} times`);
    }
    if (event.webhookUrl === null) return skipped("no webhook URL configured");
    if (event.webhookSecretSealed === null) return skipped("no webhook secret configured; not sent unsigned");
    let secret = this.#opened.get(event.webhookSecretSealed);
    if (secret === undefined) {
      try {
        secret = this.#o.openSecret(event.webhookSecretSealed);
      } catch {
        return skipped("webhook secret cannot be decrypted with ROSTER_SECRETS");
      }
      if (this.#opened.size >= MAX_OPENED_SECRETS) this.#opened.clear();
      this.#opened.set(event.webhookSecretSealed, secret);
    }
    return this.#o.sender.send({
      url: event.webhookUrl,
      body: event.body,
      secret,
      webhookId: event.id,
      timestampMs,
      traceparent: event.traceparent,
    });
  }
}

/** The wait before the next attempt of a failed delivery; undefined when it is not retried. */
function retryWait(event: ClaimedEvent): number | undefined {
  if (event.webhookRetry !== "backoff") return undefined;
  const base = RETRY_SCHEDULE_MS[event.attempt - 1];
  if (base === undefined) return undefined;
  return Math.round(base * (1 + RETRY_JITTER * (2 * Math.random() - 1)));
}
