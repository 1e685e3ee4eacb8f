import { type Kysely, sql } from "kysely";

/**
 * What the operator sees (docs/operations.md):
 *
 * - `scim_clients.request_log`: which SCIM requests of a connection are kept — `errors` (4xx/5xx), `all`, `off`.
 * - `scim_request_log`: one row per kept SCIM request, bodies redacted. Ids are UUIDv7, so the primary key orders
 *   by time: newest-first pages and the retention prune both walk an index. No foreign key: rows arrive in batches
 *   after the request, and a client deleted in between must not fail its neighbours' insert.
 * - `scim_request_counts`: requests and errors per client and hour, kept for every request whatever `request_log`
 *   says, so a connection's health (last request, last 24 h) is a sum of at most 25 rows.
 * - `admin_audit_log`: one row per admin API write; field names changed, never their values.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table scim_clients add column request_log text not null default 'errors'
      constraint scim_clients_request_log_check check (request_log in ('errors', 'all', 'off'));

    create table scim_request_log (
      id uuid constraint scim_request_log_pkey primary key,
      client_id text not null,
      organization_id uuid not null,
      time timestamptz not null,
      method text not null,
      path text not null,
      query text not null,
      status smallint not null,
      scim_type text,
      duration_ms double precision not null,
      resource_id text,
      request_body text,
      request_truncated boolean not null default false,
      response_body text,
      response_truncated boolean not null default false,
      user_agent text
    );
    create index scim_request_log_client_idx on scim_request_log (client_id, id desc);
    create index scim_request_log_resource_idx on scim_request_log (client_id, resource_id, id desc)
      where resource_id is not null;

    create table scim_request_counts (
      client_id text not null,
      hour timestamptz not null,
      requests bigint not null,
      errors bigint not null,
      last_request_time timestamptz not null,
      constraint scim_request_counts_pkey primary key (client_id, hour)
    );
    create index scim_request_counts_hour_idx on scim_request_counts (hour);

    create table admin_audit_log (
      id uuid constraint admin_audit_log_pkey primary key,
      time timestamptz not null,
      actor_id text not null,
      actor_name text not null,
      action text not null,
      target text not null,
      changed_fields text[] not null,
      status smallint not null
    );
    create index admin_audit_log_target_idx on admin_audit_log (target, id desc);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table admin_audit_log;
    drop table scim_request_counts;
    drop table scim_request_log;
    alter table scim_clients drop column request_log;
  `.execute(db);
}
