import { type Kysely, sql } from "kysely";

/**
 * Custom schema extensions on groups (docs/scim-extensions.md): the extension objects of a group in one nullable
 * jsonb column of the group row (null for the groups of clients without Group extensions: nothing to read or
 * write), and a side table shaped like identity_extension_values that indexes the filterable and unique values.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table directory_groups add column extensions jsonb;

    create table group_extension_values (
      group_id uuid not null, organization_id uuid not null,
      attribute text not null, value text not null, is_unique boolean not null,
      constraint group_extension_values_pkey primary key (group_id, attribute, value),
      constraint group_extension_values_group_fkey foreign key (group_id)
        references directory_groups (id) on delete cascade
    );
    -- eq filters of every tenant; the partial unique index makes uniqueness "server" race-safe.
    create index group_extension_values_lookup_idx on group_extension_values (organization_id, attribute, value, group_id);
    create unique index group_extension_values_unique_key on group_extension_values (organization_id, attribute, value)
      where is_unique;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table group_extension_values;
    alter table directory_groups drop column extensions;
  `.execute(db);
}
