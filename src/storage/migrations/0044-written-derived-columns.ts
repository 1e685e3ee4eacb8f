import { type Kysely, sql } from "kysely";

/**
 * `identities.manager_id` and `identities.modified_hour` become plain columns, written by every statement that
 * writes the document or `updated_at` (directory/identities/repo.ts) with the values PostgreSQL computed until now:
 * the enterprise manager's value when it is a UUID, and `updated_at` to the hour. A stored generated column's
 * expression is read, planned and compiled again by every statement that writes the row — even a prepared one with
 * a cached plan — which was a twentieth of PostgreSQL's CPU in a PATCH. Dropping the expressions keeps every value
 * and rewrites nothing.
 *
 * During a rolling restart, instances of the previous release write users without these columns: `modified_hour`
 * defaults to the current hour (what their create's `updated_at` is), `manager_id` to null; an update of theirs keeps
 * both as they were (docs/deploying.md, "Upgrades").
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table identities alter column manager_id drop expression if exists;
    alter table identities alter column modified_hour drop expression if exists;
    alter table identities
      alter column modified_hour set default date_bin('1 hour', now(), timestamptz '2000-01-01 00:00:00+00'),
      alter column modified_hour set not null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index identities_manager_idx;
    drop index identities_org_modified_hour_idx;
    alter table identities drop column manager_id, drop column modified_hour;
    alter table identities add column manager_id uuid generated always as (
      case when scim -> 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User' -> 'manager' ->> 'value'
        ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
      then (scim -> 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User' -> 'manager' ->> 'value')::uuid end
    ) stored;
    alter table identities add column modified_hour timestamptz
      generated always as (date_bin('1 hour', updated_at, timestamptz '2000-01-01 00:00:00+00')) stored;
    create index identities_manager_idx on identities (organization_id, manager_id) where manager_id is not null;
    create index identities_org_modified_hour_idx on identities (organization_id, modified_hour);
  `.execute(db);
}
