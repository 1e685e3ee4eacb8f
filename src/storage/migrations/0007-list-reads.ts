import { type Kysely, sql } from "kysely";

/**
 * What a list page reads, made cheap:
 *
 * - `resource_counts`: how many users and groups each organization has, kept exact by triggers in the same
 *   transaction as the insert or delete (per row for inserts, which come one at a time and where a row trigger costs
 *   half a statement trigger's ~0.1 ms; per statement for deletes, which cascade by the thousand) — so an unfiltered `totalResults` is a sum of a few rows instead of a
 *   scan of every row of the organization on every page. A counter is split in 16 shards (one per backend, by pid)
 *   so that concurrent creates do not queue on one row lock; the total is the sum of an organization's shards.
 *   A delete cascading from its organization does not count (the organization's counters go with it).
 * - `identities.manager_id`: the enterprise manager's value when it is a UUID (only those resolve to a displayName),
 *   computed by PostgreSQL on every write, so reading a user's manager is one index lookup instead of taking the
 *   document apart on every read.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table resource_counts (
      organization_id uuid not null constraint resource_counts_organization_fkey
        references organizations (id) on delete cascade,
      resource text not null constraint resource_counts_resource_check check (resource in ('users', 'groups')),
      shard smallint not null,
      n bigint not null,
      constraint resource_counts_pkey primary key (organization_id, resource, shard)
    );

    create function roster_count_inserted() returns trigger language plpgsql as $$
    begin
      insert into resource_counts (organization_id, resource, shard, n)
      values (new.organization_id, tg_argv[0], pg_backend_pid() % 16, 1)
      on conflict (organization_id, resource, shard) do update set n = resource_counts.n + 1;
      return null;
    end $$;

    create function roster_count_deleted() returns trigger language plpgsql as $$
    begin
      insert into resource_counts (organization_id, resource, shard, n)
      select d.organization_id, tg_argv[0], pg_backend_pid() % 16, -count(*) from deleted d
      where exists (select 1 from organizations o where o.id = d.organization_id)
      group by d.organization_id
      on conflict (organization_id, resource, shard) do update set n = resource_counts.n + excluded.n;
      return null;
    end $$;

    create trigger identities_count_inserted after insert on identities
      for each row execute function roster_count_inserted('users');
    create trigger identities_count_deleted after delete on identities
      referencing old table as deleted for each statement execute function roster_count_deleted('users');
    create trigger directory_groups_count_inserted after insert on directory_groups
      for each row execute function roster_count_inserted('groups');
    create trigger directory_groups_count_deleted after delete on directory_groups
      referencing old table as deleted for each statement execute function roster_count_deleted('groups');

    insert into resource_counts (organization_id, resource, shard, n)
    select organization_id, 'users', 0, count(*) from identities group by organization_id;
    insert into resource_counts (organization_id, resource, shard, n)
    select organization_id, 'groups', 0, count(*) from directory_groups group by organization_id;

    alter table identities add column manager_id uuid generated always as (
      case when scim -> 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User' -> 'manager' ->> 'value'
        ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
      then (scim -> 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User' -> 'manager' ->> 'value')::uuid end
    ) stored;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table identities drop column manager_id;
    drop trigger identities_count_inserted on identities;
    drop trigger identities_count_deleted on identities;
    drop trigger directory_groups_count_inserted on directory_groups;
    drop trigger directory_groups_count_deleted on directory_groups;
    drop function roster_count_inserted();
    drop function roster_count_deleted();
    drop table resource_counts;
  `.execute(db);
}
