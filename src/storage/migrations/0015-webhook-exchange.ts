import { type Kysely, sql } from "kysely";

/**
 * The event log keeps each attempt's exchange (docs/webhooks.md "Event log"):
 *
 * - `request_headers`: the headers sent — content type, `webhook-id`, `webhook-timestamp` and the signatures. A
 *   signature is an HMAC of one body, not the secret; the webhook secret itself is never stored here.
 * - `response_body`: the receiver's answer, its first 4 KiB as text; `response_body_truncated` says it was longer.
 *
 * Nullable: attempts logged before this migration, and attempts that were never sent, have none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table webhook_events add column request_headers jsonb, add column response_body text,
      add column response_body_truncated boolean
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table webhook_events drop column request_headers, drop column response_body,
      drop column response_body_truncated
  `.execute(db);
}
