import type { Kysely } from "kysely";
import { replaceInRouteEvents } from "./0035-active-user-counts.js";

/**
 * Only a decision to trip needs a connection's guard row to itself. Every deprovisioning write took the row for
 * update, so a burst of deactivations ran one at a time even once the connection held them all, or with its guard
 * switched off: 3–5 ms of waiting per deactivation at 16 writes in flight. Now a write reads the row first and takes
 * it for update only while the guard is on and not tripped (it counts the window and may trip); a connection that
 * holds, or whose guard is off, shares the row with its other writes. Release and untrip still take the row for
 * update (deprovisioning-guard/repo.ts), so a held write and the end of the hold stay ordered: the held write
 * commits first and keeps the connection tripped, or it sees the hold ended. A write that finds the hold ended
 * between its read and its lock writes its mark but leaves the decision to trip to the next deactivation.
 */
const DECLARE_FROM = "      trip_data text;\n";
const DECLARE_TO = "      trip_data text;\n      may_trip boolean;\n";
const LOCK_FROM = `        select * into g from deprovisioning_guards where client_id = p_dir for update;
        if g.enabled or g.tripped_time is not null then`;
const LOCK_TO = `        select * into g from deprovisioning_guards where client_id = p_dir;
        may_trip := g.enabled and g.tripped_time is null;
        if may_trip then
          select * into g from deprovisioning_guards where client_id = p_dir for update;
        else
          select * into g from deprovisioning_guards where client_id = p_dir for share;
        end if;
        if g.enabled or g.tripped_time is not null then`;
const DECIDE_FROM = "          if not held and g.enabled then";
const DECIDE_TO = "          if not held and g.enabled and may_trip then";

export async function up(db: Kysely<unknown>): Promise<void> {
  await replaceInRouteEvents(db, DECLARE_FROM, DECLARE_TO);
  await replaceInRouteEvents(db, LOCK_FROM, LOCK_TO);
  await replaceInRouteEvents(db, DECIDE_FROM, DECIDE_TO);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await replaceInRouteEvents(db, DECIDE_TO, DECIDE_FROM);
  await replaceInRouteEvents(db, LOCK_TO, LOCK_FROM);
  await replaceInRouteEvents(db, DECLARE_TO, DECLARE_FROM);
}
