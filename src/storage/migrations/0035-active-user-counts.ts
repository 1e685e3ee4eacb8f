import { type Kysely, sql } from "kysely";

/**
 * How many active users an organization has, kept exact beside its user count (0007-list-reads): the deprovisioning
 * guard compares a connection's deactivations with that share on every counted deactivation, and counting the
 * organization's active identities there cost a scan of all of them (2–3 ms at 5 000 users, under the guard's row
 * lock) each time.
 *
 * - `resource_counts` gets the resource `active_users`, in the same 16 shards. An inserted user counts in the same
 *   statement as its user count (one upsert of two rows).
 * - A change of `active` and the deletion of an active user count in a row trigger that fires *before* the row
 *   changes, not after the statement: the guard's function runs in the statement that deactivates or deletes, and
 *   reads the organization as that statement leaves it (as its count of identities did) — an after-trigger would
 *   count the statement's own changes only once it has ended. The `when` of each skips every other row without
 *   calling it. Nothing on `identities` can skip a row after a before-trigger has run (no other before-trigger, no
 *   `on conflict` on its updates or deletes); a statement that fails takes the count with it.
 * - The guard's function reads the sum of those shards instead of counting identities.
 * - The counters start from a count made after the triggers exist, in the migration's transaction: the triggers'
 *   lock on `identities` holds every write back until it commits, so none is counted twice or missed.
 */
const COUNT_IDENTITIES =
  "select count(*) into active_users from identities i where i.organization_id = p_org and i.active;";
const SUM_COUNTERS =
  "select coalesce(sum(rc.n), 0) into active_users from resource_counts rc where rc.organization_id = p_org and rc.resource = 'active_users';";

/** Re-creates the guard's function with one statement of its body replaced; fails if that statement is not there. */
export async function replaceInRouteEvents(db: Kysely<unknown>, from: string, to: string): Promise<void> {
  const { rows } = await sql<{ def: string }>`
    select pg_get_functiondef(
      'roster_route_events(boolean, uuid, text, timestamptz, boolean, text, json, uuid)'::regprocedure) as def
  `.execute(db);
  const def = rows[0]?.def ?? "";
  if (!def.includes(from)) throw new Error("roster_route_events does not hold the statement this migration replaces");
  await sql.raw(def.replace(from, to)).execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table resource_counts drop constraint resource_counts_resource_check,
      add constraint resource_counts_resource_check check (resource in ('users', 'groups', 'active_users'));

    create function roster_count_user_inserted() returns trigger language plpgsql as $$
    begin
      if new.active then
        insert into resource_counts (organization_id, resource, shard, n)
        values (new.organization_id, 'users', pg_backend_pid() % 16, 1),
          (new.organization_id, 'active_users', pg_backend_pid() % 16, 1)
        on conflict (organization_id, resource, shard) do update set n = resource_counts.n + 1;
      else
        insert into resource_counts (organization_id, resource, shard, n)
        values (new.organization_id, 'users', pg_backend_pid() % 16, 1)
        on conflict (organization_id, resource, shard) do update set n = resource_counts.n + 1;
      end if;
      return null;
    end $$;

    create function roster_count_active_deleted() returns trigger language plpgsql as $$
    begin
      -- A delete cascading from its organization does not count: the organization's counters go with it.
      if exists (select 1 from organizations o where o.id = old.organization_id) then
        insert into resource_counts (organization_id, resource, shard, n)
        values (old.organization_id, 'active_users', pg_backend_pid() % 16, -1)
        on conflict (organization_id, resource, shard) do update set n = resource_counts.n - 1;
      end if;
      return old;
    end $$;

    create function roster_count_active_changed() returns trigger language plpgsql as $$
    begin
      insert into resource_counts (organization_id, resource, shard, n)
      values (new.organization_id, 'active_users', pg_backend_pid() % 16, case when new.active then 1 else -1 end)
      on conflict (organization_id, resource, shard) do update set n = resource_counts.n + excluded.n;
      return new;
    end $$;

    drop trigger identities_count_inserted on identities;
    create trigger identities_count_inserted after insert on identities
      for each row execute function roster_count_user_inserted();
    create trigger identities_count_active_changed before update of active on identities
      for each row when (old.active <> new.active) execute function roster_count_active_changed();
    create trigger identities_count_active_deleted before delete on identities
      for each row when (old.active) execute function roster_count_active_deleted();

    insert into resource_counts (organization_id, resource, shard, n)
    select organization_id, 'active_users', 0, count(*) from identities where active group by organization_id;
  `.execute(db);
  await replaceInRouteEvents(db, COUNT_IDENTITIES, SUM_COUNTERS);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await replaceInRouteEvents(db, SUM_COUNTERS, COUNT_IDENTITIES);
  await sql`
    drop trigger identities_count_active_deleted on identities;
    drop trigger identities_count_active_changed on identities;
    drop trigger identities_count_inserted on identities;
    create trigger identities_count_inserted after insert on identities
      for each row execute function roster_count_inserted('users');
    drop function roster_count_active_deleted();
    drop function roster_count_active_changed();
    drop function roster_count_user_inserted();
    delete from resource_counts where resource = 'active_users';
    alter table resource_counts drop constraint resource_counts_resource_check,
      add constraint resource_counts_resource_check check (resource in ('users', 'groups'));
  `.execute(db);
}
