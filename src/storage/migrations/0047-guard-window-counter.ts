import { type Kysely, sql } from "kysely";
import { replaceInRouteEvents } from "./0035-active-user-counts.js";

/**
 * The guard's count of a connection's window without reading the whole window. Each counted deactivation counted
 * every mark of the window again, under the guard row's lock: about 0.1 ms per thousand marks, so a directory of
 * 100 000 users nearing a 20 % share read 25 000 marks per deactivation, and all its deactivations waited for one
 * another behind that lock.
 *
 * - The guard row keeps the count: `window_count` marks after `counted_after`, as the last counting transaction
 *   left them (it counts under the row's exclusive lock and writes both in the same transaction). The next one
 *   subtracts the marks that left the window since (marks between `counted_after` and its own window start, each
 *   read once as it expires) and adds its own.
 * - It counts the window afresh when no count is kept (a new row, or the trip ended: a trigger forgets the count
 *   whenever `tripped_time` is cleared, by this release or the previous one, as the marks are deleted then), when its
 *   window starts before `counted_after` (the window was widened), or when a mark was written that no count took in.
 * - Marks written while tripped are never counted (the trip ends by deleting them). A mark is written uncounted
 *   only by a transaction that found the guard untripped and enabled after taking the row's shared lock (it had read
 *   it tripped or switched off just before an admin changed it): it cannot write the row there without risking a
 *   deadlock with another such holder, so it flags its marks, and the next counting transaction counts afresh. A
 *   partial index keeps that test to an empty probe.
 */
const REPLACEMENTS: readonly (readonly [string, string])[] = [
  [
    `deleted integer;`,
    `deleted integer;
      window_start timestamptz;`,
  ],
  [
    `          insert into deprovisioning_marks (client_id, mark_time) select p_dir, p_at from generate_series(1, deprov);
          held := g.tripped_time is not null;
          if not held and g.enabled and may_trip then
            select count(*) into recent from deprovisioning_marks m
              where m.client_id = p_dir and m.mark_time > p_at - make_interval(secs => g.window_seconds);`,
    `          held := g.tripped_time is not null;
          insert into deprovisioning_marks (client_id, mark_time, uncounted)
            select p_dir, p_at, not held and not may_trip from generate_series(1, deprov);
          if not held and g.enabled and may_trip then
            window_start := p_at - make_interval(secs => g.window_seconds);
            if g.counted_after is null or window_start < g.counted_after
                or exists (select 1 from deprovisioning_marks m where m.client_id = p_dir and m.uncounted) then
              select count(*) into recent from deprovisioning_marks m
                where m.client_id = p_dir and m.mark_time > window_start;
              update deprovisioning_marks m set uncounted = false where m.client_id = p_dir and m.uncounted;
            else
              select g.window_count + deprov - count(*) into recent from deprovisioning_marks m
                where m.client_id = p_dir and m.mark_time > g.counted_after and m.mark_time <= window_start;
            end if;
            update deprovisioning_guards set window_count = recent, counted_after = window_start
              where client_id = p_dir;`,
  ],
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table deprovisioning_guards add column window_count integer, add column counted_after timestamptz;
    alter table deprovisioning_marks add column uncounted boolean not null default false;
    create index deprovisioning_marks_uncounted_idx on deprovisioning_marks (client_id) where uncounted;

    create function roster_guard_forget_count() returns trigger language plpgsql as $$
    begin
      new.window_count := null;
      new.counted_after := null;
      return new;
    end $$;
    create trigger deprovisioning_guards_forget_count before update of tripped_time on deprovisioning_guards
      for each row when (old.tripped_time is not null and new.tripped_time is null)
      execute function roster_guard_forget_count();
  `.execute(db);
  for (const [from, to] of REPLACEMENTS) await replaceInRouteEvents(db, from, to);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [from, to] of [...REPLACEMENTS].reverse()) await replaceInRouteEvents(db, to, from);
  await sql`
    drop trigger deprovisioning_guards_forget_count on deprovisioning_guards;
    drop function roster_guard_forget_count();
    drop index deprovisioning_marks_uncounted_idx;
    alter table deprovisioning_marks drop column uncounted;
    alter table deprovisioning_guards drop column window_count, drop column counted_after;
  `.execute(db);
}
