import { type Kysely, sql } from "kysely";

/**
 * Crash-safe webhook delivery (docs/webhooks.md "Delivery guarantees"):
 *
 * - `webhook_dispatchers`: one row per running dispatcher, its heartbeat renewed by the database's clock; a claim
 *   whose owner's heartbeat is stale, or whose owner row is gone (a clean stop deletes it), is taken over at once
 *   instead of waiting for its lease to run out.
 * - `webhook_outbox.claimed_by`: the owner of a claim. `attempts` counts the attempts that really started (the head
 *   of a claim, and each event marked started just before it is sent), `attempt_started_at` is set while an attempt
 *   is under way, and `interrupted` counts the attempts a takeover found started and never finished: an event is
 *   given up only by its own interrupted attempts, never by claims of events queued behind it.
 * - `webhook_events.attempt`: the number of the attempt an event-log entry describes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table webhook_dispatchers (
      id uuid constraint webhook_dispatchers_pkey primary key,
      heartbeat_at timestamptz not null,
      started_at timestamptz not null
    );
    alter table webhook_outbox
      drop column claims,
      add column claimed_by uuid,
      add column attempts integer not null default 0,
      add column interrupted integer not null default 0,
      add column attempt_started_at timestamptz;
    alter table webhook_events add column attempt integer not null default 1;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table webhook_events drop column attempt;
    alter table webhook_outbox
      drop column attempt_started_at,
      drop column interrupted,
      drop column attempts,
      drop column claimed_by,
      add column claims integer not null default 0;
    drop table webhook_dispatchers;
  `.execute(db);
}
