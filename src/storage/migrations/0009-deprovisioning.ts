import { type Kysely, sql } from "kysely";

/**
 * Deprovisioning and credential rotation (docs/security.md):
 *
 * - API keys follow their person. `api_keys.actor_identity_id` is the actor id read as a UUID (computed by
 *   PostgreSQL), so a key's identity is one primary-key probe away and an identity's keys one index probe away.
 *   Suspension is not stored: it is read from `identities.active` whenever a key is verified or shown, so it starts
 *   and ends in the very transaction that changes the identity. Revocation must outlive the identity, so a
 *   statement trigger writes it in the deleting transaction, whatever deletes the identity (a SCIM DELETE, or any
 *   later path). A delete cascading from its organization revokes nothing: the keys go with the organization.
 * - `organizations.keys_follow_identity`: the per-organization switch (default on).
 * - SCIM clients keep a previous secret hash until its grace period ends (two live secrets during a rotation).
 * - Named admin tokens, stored as SHA-256 digests (256-bit random tokens need no salt or slow hash).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table organizations add column keys_follow_identity boolean not null default true;

    alter table api_keys add column revoke_reason text;
    update api_keys set revoke_reason = 'ADMIN' where revoke_time is not null;
    alter table api_keys add column actor_identity_id uuid generated always as (
      case when actor_id ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
      then actor_id::uuid end
    ) stored;
    create index api_keys_actor_identity_idx on api_keys (actor_identity_id) where actor_identity_id is not null;

    create function roster_revoke_keys_of_deleted_identities() returns trigger language plpgsql as $$
    begin
      update api_keys k set revoke_time = now(), revoke_reason = 'ACTOR_DELETED', update_time = now()
      from deleted d join organizations o on o.id = d.organization_id and o.keys_follow_identity
      where k.actor_identity_id = d.id and k.organization_id = d.organization_id and k.revoke_time is null;
      return null;
    end $$;
    create trigger identities_revoke_keys after delete on identities
      referencing old table as deleted for each statement execute function roster_revoke_keys_of_deleted_identities();

    alter table scim_clients
      add column secret_rotate_time timestamptz,
      add column previous_secret_hash text,
      add column previous_secret_expire_time timestamptz,
      add column previous_secret_last_used_time timestamptz;

    create table admin_tokens (
      id uuid constraint admin_tokens_pkey primary key,
      name text not null,
      role text not null constraint admin_tokens_role_check check (role in ('admin', 'viewer')),
      digest bytea not null constraint admin_tokens_digest_key unique,
      expire_time timestamptz,
      revoke_time timestamptz,
      last_used_time timestamptz,
      create_time timestamptz not null,
      constraint admin_tokens_digest_length check (octet_length(digest) = 32)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table admin_tokens;
    alter table scim_clients drop column secret_rotate_time, drop column previous_secret_hash,
      drop column previous_secret_expire_time, drop column previous_secret_last_used_time;
    drop trigger identities_revoke_keys on identities;
    drop function roster_revoke_keys_of_deleted_identities();
    alter table api_keys drop column actor_identity_id, drop column revoke_reason;
    alter table organizations drop column keys_follow_identity;
  `.execute(db);
}
