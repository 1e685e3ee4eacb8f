import { type Selectable, sql } from "kysely";
import { redactHeaders, redactText } from "../platform/redact.js";
import type { Db } from "../storage/database.js";
import type { WebhookEventsTable } from "../storage/schema.js";
import type { DeliveryResult } from "./sender.js";

/** One delivery attempt as stored in the event log. */
export interface AttemptRecord {
  readonly id: string;
  readonly event_id: string;
  readonly client_id: string;
  readonly organization_id: string;
  readonly event: string;
  readonly payload: string;
  readonly status_code: number | null;
  readonly error: string | null;
  readonly duration_ms: number;
  readonly success: boolean;
  readonly resend: boolean;
  readonly attempted_at: Date;
  /** The attempt's number for its event: 1 for the first; an interrupted attempt keeps its number. */
  readonly attempt: number;
  /** Where the event stood after this attempt. */
  readonly state: DeliveryState;
  /** When the next attempt is due (state retrying). */
  readonly next_attempt_time: Date | null;
  /** The headers sent (signatures, never the secret); null when nothing was sent. */
  readonly request_headers: Readonly<Record<string, string>> | null;
  /** The receiver's answer, its first 4 KiB (response-body.ts); null when none was read. */
  readonly response_body: string | null;
  readonly response_body_truncated: boolean | null;
}

type Outcome = "status_code" | "error" | "duration_ms" | "success" | ExchangeColumn;
type ExchangeColumn = "request_headers" | "response_body" | "response_body_truncated";

/**
 * The outcome columns of an attempt from a sender's result (absent parts of the exchange are null). Every attempt
 * reaches the event log through here, so this is where what a receiver answered loses its secrets (`db_password=…`,
 * a token in a JSON answer, a bearer credential) and any credential header is hidden: admins read this log.
 */
export function outcomeOf(result: DeliveryResult): Pick<AttemptRecord, Outcome> {
  const headers = result.requestHeaders;
  const body = result.responseBody;
  return {
    status_code: result.statusCode,
    error: result.error === null ? null : redactText(result.error),
    duration_ms: result.durationMs,
    success: result.success,
    request_headers: headers === undefined || headers === null ? null : redactHeaders(headers),
    response_body: body === undefined || body === null ? null : redactText(body),
    response_body_truncated: result.responseBodyTruncated ?? null,
  };
}

/** Every column of an attempt, in one list for the statements that copy AttemptRecords in bulk. */
export const ATTEMPT_COLUMNS = sql.raw(
  "id, event_id, client_id, organization_id, event, payload, status_code, error, duration_ms, success, resend, " +
    "attempted_at, attempt, state, next_attempt_time, request_headers, response_body, response_body_truncated",
);

export type DeliveryState = "delivered" | "retrying" | "failed";

export type LoggedAttempt = Selectable<WebhookEventsTable>;

export interface EventLogQuery {
  readonly clientId: string;
  readonly event?: string | undefined;
  readonly success?: boolean | undefined;
  /** Keyset position of newest-first paging: list attempts older than this one. */
  readonly before?: { readonly attemptedAt: Date; readonly id: string } | undefined;
  readonly limit: number;
}

/** Rows deleted per statement by the pruner, so no single delete holds locks for long. */
const PRUNE_BATCH = 5000;

export class EventLog {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  async insert(attempt: AttemptRecord): Promise<void> {
    const headers = attempt.request_headers;
    await this.#db
      .insertInto("webhook_events")
      .values({ ...attempt, request_headers: headers === null ? null : JSON.stringify(headers) })
      .execute();
  }

  /** Newest first; served by the (client_id[, event | success], attempted_at desc, id desc) indexes. */
  async list(q: EventLogQuery): Promise<LoggedAttempt[]> {
    let query = this.#db
      .selectFrom("webhook_events")
      .selectAll()
      .where("client_id", "=", q.clientId)
      .orderBy("attempted_at", "desc")
      .orderBy("id", "desc")
      .limit(q.limit);
    if (q.event !== undefined) query = query.where("event", "=", q.event);
    if (q.success !== undefined) query = query.where("success", "=", q.success);
    const before = q.before;
    if (before !== undefined) {
      query = query.where(sql<boolean>`(attempted_at, id) < (${before.attemptedAt}, ${before.id}::uuid)`);
    }
    return query.execute();
  }

  /** The newest logged attempt of an event of this client. */
  async latestOf(clientId: string, eventId: string): Promise<LoggedAttempt | undefined> {
    return this.#db
      .selectFrom("webhook_events")
      .selectAll()
      .where("client_id", "=", clientId)
      .where("event_id", "=", eventId)
      .orderBy("attempted_at", "desc")
      .orderBy("id", "desc")
      .limit(1)
      .executeTakeFirst();
  }

  /** Retention (ROSTER_WEBHOOK_LOG_RETENTION_DAYS): deletes attempts older than `cutoff`; returns how many. */
  async pruneBefore(cutoff: Date): Promise<number> {
    let total = 0;
    for (;;) {
      const r = await this.#db
        .deleteFrom("webhook_events")
        .where(
          "id",
          "in",
          this.#db.selectFrom("webhook_events").select("id").where("attempted_at", "<", cutoff).limit(PRUNE_BATCH),
        )
        .executeTakeFirst();
      const n = Number(r.numDeletedRows);
      total += n;
      if (n < PRUNE_BATCH) return total;
    }
  }
}
