import { type Kysely, sql } from "kysely";

/**
 * Custom SCIM schema extensions declared per SCIM client (docs/scim-extensions.md), and the one side table that
 * indexes the values of their filterable and unique attributes for every tenant: a row per (identity, attribute,
 * value), one lookup index, and one partial unique index that makes `uniqueness: "server"` race-safe.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table scim_clients add column extensions jsonb not null default '[]'::jsonb;
    alter table scim_clients add column unknown_extensions text not null default 'reject'
      constraint scim_clients_unknown_extensions_check check (unknown_extensions in ('reject', 'store'));

    create table identity_extension_values (
      identity_id uuid not null constraint identity_extension_values_identity_fkey
        references identities (id) on delete cascade,
      organization_id uuid not null,
      attribute text not null,
      value text not null,
      is_unique boolean not null,
      constraint identity_extension_values_pkey primary key (identity_id, attribute, value)
    );
    create index identity_extension_values_lookup_idx
      on identity_extension_values (organization_id, attribute, value, identity_id);
    create unique index identity_extension_values_unique_key
      on identity_extension_values (organization_id, attribute, value) where is_unique;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table identity_extension_values;
    alter table scim_clients drop column unknown_extensions;
    alter table scim_clients drop column extensions;
  `.execute(db);
}
