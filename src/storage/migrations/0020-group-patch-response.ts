import { type Kysely, sql } from "kysely";

/**
 * - `scim_clients.group_patch_response`: what a group PATCH without `attributes`/`excludedAttributes` answers —
 *   `no_content` (204, the default: the cost of a membership change does not grow with the group) or `full`
 *   (200 with the whole group, for clients that read the answer).
 * - `directory_groups.version`: a row version, bumped by every write of the group (its attributes or its members),
 *   from which `meta.version` and the `ETag` header are made, as `identities.version` is for users.
 * - `identities_manager_idx`: the users that name a given user as their manager, found when that user is deleted
 *   (their `manager` is cleared in the same transaction).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table scim_clients add column group_patch_response text not null default 'no_content'
      constraint scim_clients_group_patch_response_check check (group_patch_response in ('no_content', 'full'));
    alter table directory_groups add column version bigint not null default 0;
    create index identities_manager_idx on identities (organization_id, manager_id) where manager_id is not null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index identities_manager_idx;
    alter table directory_groups drop column version;
    alter table scim_clients drop column group_patch_response;
  `.execute(db);
}
