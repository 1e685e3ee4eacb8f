import type { Kysely } from "kysely";
import { replaceInRouteEvents } from "./0035-active-user-counts.js";

/**
 * The deprovisioning guard counts deactivations and deletions, not every write of an inactive user. A deactivation
 * is the change that makes an active user inactive, and the batch of such a change carries its user's key
 * suspension (a row standing for `api_key.suspended` events, with the user as `keyActor`): counted so, an update of
 * a user who was already inactive — an IdP re-sending its disabled users' profiles, say — neither counts towards a
 * trip nor is held, unless an earlier held change of the same user keeps it waiting. No row's data is parsed.
 */
const COUNT_FROM = `select count(*) into deprov from json_to_recordset(p_rows) as r(event text, data text)
        -- Only a user event's data is JSON (a row standing for key events has none): cast it under a case.
        where case when r.event = 'user.updated' then (r.data::json->>'active') = 'false'
          else r.event = 'user.deleted' end;`;
const COUNT_TO = `select count(*) into deprov from json_to_recordset(p_rows) as r(event text, "keyActor" uuid)
        -- A deactivation's batch carries its user's key suspension: one such row per deactivated user.
        where r.event = 'user.deleted' or (r.event = 'api_key.suspended' and r."keyActor" is not null);`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await replaceInRouteEvents(db, COUNT_FROM, COUNT_TO);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await replaceInRouteEvents(db, COUNT_TO, COUNT_FROM);
}
