import { type Kysely, sql } from "kysely";

/**
 * A user's update can be HOT (heap-only: the new row version on the old one's page, no index entry written) when no
 * indexed value changes, as in most PATCHes and PUTs. `updated_at` changes on every write, and its index
 * `(organization_id, updated_at)` made every update write an entry into each of the table's six indexes. The index
 * for `meta.lastModified` filters and sorts is now on the hour the row was last modified (`modified_hour`, computed
 * by PostgreSQL): a user written again within the same hour keeps that value, and its update is HOT when the page
 * has room, which a fillfactor of 85 keeps for it. A comparison of `meta.lastModified` adds a range on the hour,
 * which the index serves, and checks `updated_at` itself on the rows in that range (search/repo-compile.ts).
 * Adding the stored column rewrites the table once, under its exclusive lock, at the new fillfactor.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table identities set (fillfactor = 85);
    alter table identities add column modified_hour timestamptz
      generated always as (date_bin('1 hour', updated_at, timestamptz '2000-01-01 00:00:00+00')) stored;
    create index identities_org_modified_hour_idx on identities (organization_id, modified_hour);
    drop index identities_org_updated_at_idx;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    create index identities_org_updated_at_idx on identities (organization_id, updated_at);
    drop index identities_org_modified_hour_idx;
    alter table identities drop column modified_hour;
    alter table identities reset (fillfactor);
  `.execute(db);
}
