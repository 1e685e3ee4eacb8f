import type { Clock } from "../platform/clock.js";
import { attemptId } from "./attempt-id.js";
import { type AttemptRecord, type EventLog, outcomeOf } from "./event-log-repo.js";
import type { WebhookSender } from "./sender.js";

export type ResendResult =
  | { readonly ok: true; readonly attempt: AttemptRecord; readonly logged: boolean }
  | { readonly ok: false; readonly reason: "event_not_found" | "no_webhook" };

/** What a resend needs of the connection: where it sends, with what secret, and whether it logs. */
export interface ResendTarget {
  readonly clientId: string;
  readonly organizationId: string;
  readonly webhookUrl: string | null;
  readonly webhookSecretSealed: string | null;
  readonly logWebhookEvents: boolean;
}

/**
 * Re-sends one logged event by hand — a new attempt, signed anew with the current secret and
 * timestamp, to the URL configured now. Synchronous and outside the outbox: no ordering against newer events.
 */
export class WebhookResender {
  readonly #log: EventLog;
  readonly #sender: WebhookSender;
  readonly #clock: Clock;
  readonly #openSecret: (sealed: string) => string;

  constructor(log: EventLog, sender: WebhookSender, clock: Clock, openSecret: (sealed: string) => string) {
    this.#log = log;
    this.#sender = sender;
    this.#clock = clock;
    this.#openSecret = openSecret;
  }

  async resend(client: ResendTarget, eventId: string): Promise<ResendResult> {
    const logged = await this.#log.latestOf(client.clientId, eventId);
    if (logged === undefined) return { ok: false, reason: "event_not_found" };
    if (client.webhookUrl === null || client.webhookSecretSealed === null) return { ok: false, reason: "no_webhook" };
    const attemptedAt = this.#clock.now();
    const result = await this.#sender.send({
      url: client.webhookUrl,
      body: logged.payload,
      secret: this.#openSecret(client.webhookSecretSealed),
      webhookId: logged.event_id,
      timestampMs: attemptedAt.getTime(),
    });
    const attempt: AttemptRecord = {
      id: attemptId(attemptedAt.getTime()),
      event_id: logged.event_id,
      client_id: client.clientId,
      organization_id: client.organizationId,
      event: logged.event,
      payload: logged.payload,
      ...outcomeOf(result),
      resend: true,
      attempted_at: attemptedAt,
      attempt: logged.attempt + 1,
      state: result.success ? "delivered" : "failed",
      next_attempt_time: null,
    };
    // Every attempt is kept while logging is on; with it off the result is only returned.
    if (client.logWebhookEvents) await this.#log.insert(attempt);
    return { ok: true, attempt, logged: client.logWebhookEvents };
  }
}
