import type { Kysely } from "kysely";
import { replaceInRouteEvents } from "./0035-active-user-counts.js";

/**
 * Two statements `roster_route_events` ran for every deprovisioning batch whatever it held, each a plan to start
 * and end in PL/pgSQL: the insert that creates the connection's guard row, where the row exists from the first
 * deprovisioning change on (it is read first, and created only when missing), and the statement that undoes the
 * key revocations of a held deletion, for a batch with no deletion (a deactivation). The first count of the batch
 * counts its deletions as well.
 */
const REPLACEMENTS: readonly (readonly [string, string])[] = [
  [
    `deprov integer;`,
    `deprov integer;
      deleted integer;`,
  ],
  [
    `select count(*) into deprov from json_to_recordset(p_rows) as r(event text, "keyActor" uuid)`,
    `select count(*), count(*) filter (where r.event = 'user.deleted') into deprov, deleted
        from json_to_recordset(p_rows) as r(event text, "keyActor" uuid)`,
  ],
  [
    `insert into deprovisioning_guards (client_id) values (p_dir) on conflict do nothing;
        select * into g from deprovisioning_guards where client_id = p_dir;`,
    `select * into g from deprovisioning_guards where client_id = p_dir;
        if not found then
          insert into deprovisioning_guards (client_id) values (p_dir) on conflict do nothing;
          select * into g from deprovisioning_guards where client_id = p_dir;
        end if;`,
  ],
  [
    `update api_keys k set revoke_time = null, revoke_reason = null
        from json_to_recordset(p_rows) as r(event text, "orderingKey" text)
        where r.event = 'user.deleted'
          and k.actor_identity_id = case when r.event = 'user.deleted' then r."orderingKey"::uuid end
          and k.organization_id = p_org and k.revoke_reason = 'ACTOR_DELETED' and k.revoke_time = now();`,
    `if deleted > 0 then
          update api_keys k set revoke_time = null, revoke_reason = null
          from json_to_recordset(p_rows) as r(event text, "orderingKey" text)
          where r.event = 'user.deleted'
            and k.actor_identity_id = case when r.event = 'user.deleted' then r."orderingKey"::uuid end
            and k.organization_id = p_org and k.revoke_reason = 'ACTOR_DELETED' and k.revoke_time = now();
        end if;`,
  ],
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [from, to] of REPLACEMENTS) await replaceInRouteEvents(db, from, to);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [from, to] of [...REPLACEMENTS].reverse()) await replaceInRouteEvents(db, to, from);
}
