import type { Kysely } from "kysely";
import { replaceInRouteEvents } from "./0035-active-user-counts.js";

/**
 * A deprovisioning write that found its connection's guard untripped under the guard row's lock skips the lookup
 * of held events of its resources: held events exist only while the guard is tripped (a release or discard ends
 * the trip only once none is left, under the same row's exclusive lock), so the answer is known. The lookup cost
 * each deactivation of a burst before a trip a third of the guard's work.
 */
const FROM = `if not held then
        held := roster_holds_any(`;
const TO = `if not held and (deprov = 0 or g.tripped_time is not null) then
        held := roster_holds_any(`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await replaceInRouteEvents(db, FROM, TO);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await replaceInRouteEvents(db, TO, FROM);
}
