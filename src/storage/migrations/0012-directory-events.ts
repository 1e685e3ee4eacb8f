import { type Kysely, sql } from "kysely";

/**
 * Every directory change as an event, whether or not a webhook is configured (docs/events.md), written in the
 * change's own statement or transaction:
 *
 * - `txid` is the writing transaction's id. The feed hands out only events whose transaction is older than every
 *   transaction still running (`pg_snapshot_xmin`), in (txid, seq) order: a reader never passes an event that
 *   commits later, which ordering by a sequence alone cannot promise.
 * - `seq` orders the events of one transaction (and is the tie-breaker of the feed's position).
 * - `data` is the webhook payload's `data`, as JSON text: written once, handed out as is.
 * - Indexes: the feed per organization, the feed per directory (also what a client's deletion cascades through),
 *   the id for single reads, and a BRIN on `create_time` for the retention prune (nearly free to maintain: rows
 *   arrive in time order).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table directory_events (
      id uuid constraint directory_events_pkey primary key,
      seq bigint generated always as identity,
      txid xid8 not null default pg_current_xact_id(),
      organization_id uuid not null,
      directory_id text not null constraint directory_events_client_fkey
        references scim_clients (client_id) on delete cascade,
      event text not null,
      create_time timestamptz not null,
      data text not null
    );
    create index directory_events_feed_idx on directory_events (organization_id, txid, seq);
    create index directory_events_directory_idx on directory_events (directory_id, txid, seq);
    create index directory_events_create_time_idx on directory_events using brin (create_time);

    -- Opt-in retries of failed webhook deliveries (docs/webhooks.md "Retries"): the schedule lives in the outbox.
    alter table scim_clients add column webhook_retry text not null default 'none'
      constraint scim_clients_webhook_retry_check check (webhook_retry in ('none', 'backoff'));
    alter table webhook_outbox add column next_attempt_at timestamptz;
    alter table webhook_events add column state text, add column next_attempt_time timestamptz;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table webhook_events drop column state, drop column next_attempt_time;
    alter table webhook_outbox drop column next_attempt_at;
    alter table scim_clients drop column webhook_retry;
    drop table directory_events;
  `.execute(db);
}
