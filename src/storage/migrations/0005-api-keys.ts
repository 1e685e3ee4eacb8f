import { type Kysely, sql } from "kysely";

/**
 * API keys: one row per key (issued or imported), its secrets as SHA-256 digests (the
 * primary key is the verify hot path; a rotated key keeps its previous digest until its grace period ends) and
 * rate-limit counters as rows, so every instance on the database counts against the same window.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table api_keys (
      key_id uuid constraint api_keys_pkey primary key,
      kind text not null constraint api_keys_kind_check check (kind in ('issued', 'imported')),
      organization_id uuid constraint api_keys_organization_fkey references organizations (id) on delete cascade,
      name text not null,
      actor_id text,
      prefix text,
      scopes jsonb not null default '[]'::jsonb,
      metadata jsonb not null default '{}'::jsonb,
      rate_limits jsonb not null default '[]'::jsonb,
      expire_time timestamptz,
      revoke_time timestamptz,
      create_time timestamptz not null,
      update_time timestamptz not null
    );
    create index api_keys_kind_organization_idx on api_keys (kind, organization_id, key_id);
    create index api_keys_kind_actor_idx on api_keys (kind, actor_id, key_id);

    create table api_key_secrets (
      digest bytea constraint api_key_secrets_digest_key primary key,
      key_id uuid not null constraint api_key_secrets_key_fkey references api_keys (key_id) on delete cascade,
      expire_time timestamptz,
      create_time timestamptz not null,
      constraint api_key_secrets_digest_length check (octet_length(digest) = 32)
    );
    create index api_key_secrets_key_idx on api_key_secrets (key_id);

    create table api_key_rate_counters (
      key_id uuid not null constraint api_key_rate_counters_key_fkey references api_keys (key_id) on delete cascade,
      limit_name text not null,
      window_start timestamptz not null,
      count integer not null,
      constraint api_key_rate_counters_pkey primary key (key_id, limit_name)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table api_key_rate_counters, api_key_secrets, api_keys`.execute(db);
}
