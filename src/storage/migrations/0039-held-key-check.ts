import type { Kysely } from "kysely";
import { replaceInRouteEvents } from "./0035-active-user-counts.js";

/**
 * `roster_route_events` asks whether its connection holds an earlier event of any of a batch's resources through
 * `roster_holds_any` (0038-held-plans), whose plan reads `held_events_client_key_idx` by both the connection and
 * the key. Its own inline check compared the key with an expression of the batch's row, and the plan cached for it
 * on the first held writes after a trip — one page of `held_events`, where every index costs the same — read the
 * connection's index `(client_id, seq)` and filtered by key: every later held write read every held row of its
 * connection (measured: 1 300 buffers and 1.3 ms per write at ~5 000 held rows).
 */
const CHECK_FROM = `held := exists (select 1 from json_to_recordset(p_rows) as r("orderingKey" text, "keyActor" uuid)
          cross join lateral (select 1 from held_events h where h.client_id = p_dir
            and h.ordering_key = coalesce(r."keyActor"::text, r."orderingKey") limit 1) h where coalesce(r."keyActor"::text, r."orderingKey") <> '');`;
const CHECK_TO = `held := roster_holds_any(p_dir, array(select coalesce(r."keyActor"::text, r."orderingKey")
          from json_to_recordset(p_rows) as r("orderingKey" text, "keyActor" uuid)
          where coalesce(r."keyActor"::text, r."orderingKey") <> ''));`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await replaceInRouteEvents(db, CHECK_FROM, CHECK_TO);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await replaceInRouteEvents(db, CHECK_TO, CHECK_FROM);
}
