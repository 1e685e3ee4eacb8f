import { type Kysely, sql } from "kysely";

/** Organizations, SCIM clients and the directory (identities, groups, memberships). Constraints are named. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table organizations (
      id uuid constraint organizations_pkey primary key,
      name text not null,
      create_time timestamptz not null default now()
    );

    create table instance_settings (
      key text constraint instance_settings_pkey primary key,
      value text not null
    );

    create table scim_clients (
      client_id text constraint scim_clients_pkey primary key,
      organization_id uuid not null constraint scim_clients_organization_fkey
        references organizations (id) on delete cascade,
      name text not null default '',
      secret_hash text not null,
      auto_link boolean not null default false,
      mapping text,
      tenant text not null default '',
      product text not null default '',
      webhook_url text,
      webhook_secret_sealed text,
      log_webhook_events boolean not null default false,
      create_time timestamptz not null default now(),
      update_time timestamptz not null default now()
    );
    create index scim_clients_organization_idx on scim_clients (organization_id, client_id);

    create table identities (
      id uuid constraint identities_pkey primary key,
      organization_id uuid not null constraint identities_organization_fkey
        references organizations (id) on delete cascade,
      active boolean not null default true,
      user_name text not null,
      external_id text,
      employee_number text,
      scim jsonb not null,
      traits jsonb not null default '{}'::jsonb,
      password_hash text,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );
    create index identities_org_id_idx on identities (organization_id, id);
    create index identities_org_user_name_idx on identities (organization_id, lower(user_name));
    create index identities_org_external_id_idx on identities (organization_id, external_id);
    create index identities_org_employee_number_idx on identities (organization_id, employee_number);

    create table identity_identifiers (
      value text constraint identity_identifiers_value_key primary key,
      identity_id uuid not null constraint identity_identifiers_identity_fkey
        references identities (id) on delete cascade,
      organization_id uuid not null,
      kind text not null
    );
    create index identity_identifiers_identity_idx on identity_identifiers (identity_id);

    create table directory_groups (
      id uuid constraint directory_groups_pkey primary key,
      organization_id uuid not null constraint directory_groups_organization_fkey
        references organizations (id) on delete cascade,
      display_name text not null,
      external_id text,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );
    create index directory_groups_org_id_idx on directory_groups (organization_id, id);
    create index directory_groups_org_display_name_idx on directory_groups (organization_id, lower(display_name));
    create unique index directory_groups_org_external_id_key on directory_groups (organization_id, external_id)
      where external_id is not null;

    create table group_user_members (
      group_id uuid not null constraint group_user_members_group_fkey
        references directory_groups (id) on delete cascade,
      identity_id uuid not null constraint group_user_members_identity_fkey
        references identities (id) on delete cascade,
      organization_id uuid not null,
      constraint group_user_members_pkey primary key (group_id, identity_id)
    );
    create index group_user_members_identity_idx on group_user_members (identity_id, group_id);

    create table group_group_members (
      group_id uuid not null constraint group_group_members_group_fkey
        references directory_groups (id) on delete cascade,
      member_group_id uuid not null constraint group_group_members_member_fkey
        references directory_groups (id) on delete cascade,
      organization_id uuid not null,
      constraint group_group_members_pkey primary key (group_id, member_group_id),
      constraint group_group_members_not_self check (group_id <> member_group_id)
    );
    create index group_group_members_member_idx on group_group_members (member_group_id, group_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table group_group_members, group_user_members, directory_groups, identity_identifiers, identities,
      scim_clients, instance_settings, organizations
  `.execute(db);
}
