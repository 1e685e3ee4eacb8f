import { type Kysely, sql } from "kysely";

/**
 * Directory webhooks: the transactional outbox of pending events and the event log of
 * delivery attempts. Constraints are named.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table webhook_outbox (
      -- Commit order of one ordering key: callers record after writing the resource, holding its row lock.
      seq bigint generated always as identity constraint webhook_outbox_pkey primary key,
      id uuid not null constraint webhook_outbox_id_key unique,
      client_id text not null constraint webhook_outbox_client_fkey
        references scim_clients (client_id) on delete cascade,
      organization_id uuid not null,
      event text not null,
      ordering_key text not null,
      -- The exact JSON body, serialised once at record time: signed and sent byte for byte.
      body text not null,
      created_at timestamptz not null,
      claimed_until timestamptz,
      claim_token text,
      claims integer not null default 0
    );
    -- The claim query: is there an older row of the same key? (head-of-key check)
    create index webhook_outbox_key_idx on webhook_outbox (client_id, ordering_key, seq);

    create table webhook_events (
      id uuid constraint webhook_events_pkey primary key,
      event_id uuid not null,
      client_id text not null constraint webhook_events_client_fkey
        references scim_clients (client_id) on delete cascade,
      organization_id uuid not null,
      event text not null,
      payload text not null,
      status_code integer,
      error text,
      duration_ms integer not null,
      success boolean not null,
      resend boolean not null default false,
      attempted_at timestamptz not null
    );
    create index webhook_events_client_time_idx on webhook_events (client_id, attempted_at desc, id desc);
    create index webhook_events_client_event_idx on webhook_events (client_id, event, attempted_at desc, id desc);
    create index webhook_events_client_success_idx
      on webhook_events (client_id, success, attempted_at desc, id desc);
    create index webhook_events_event_id_idx on webhook_events (event_id, attempted_at desc);
    create index webhook_events_attempted_at_idx on webhook_events (attempted_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table webhook_events, webhook_outbox`.execute(db);
}
