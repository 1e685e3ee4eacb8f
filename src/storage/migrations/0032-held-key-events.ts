import { type Kysely, sql } from "kysely";
import { createRouteEvents } from "./0030-deprovisioning-guard.js";

/**
 * Held key effects are published on release (docs/deprovisioning.md): a held batch keeps the rows that stand for its
 * `api_key.suspended` / `api_key.revoked` events (`key_actor` or `key_id` set, ordering key the user's or the key's
 * id, `data` empty), in their place among the change's events, where 0030 dropped them. Release expands each into
 * one event per key, as the statement that writes a flowing batch does (storage/event-store.ts). They are not held
 * events of their own: the guard's counts (`held_events`, the confirmation, the gauge) leave them out.
 *
 * A later batch of a user whose key rows are held waits behind them, as it waits behind the user's own events.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table held_events add column key_actor uuid, add column key_id uuid;
    create or replace function roster_route_events(p_when boolean, p_org uuid, p_dir text, p_at timestamptz,
      p_webhook boolean, p_traceparent text, p_rows json, p_trip_id uuid)
    returns table (id uuid, event text, ordering_key text, data text, body text, key_actor uuid, key_id uuid,
      n bigint)
    language plpgsql volatile as $$
    #variable_conflict use_column
    declare
      g deprovisioning_guards;
      deprov integer;
      held boolean;
      recent integer;
      active_users bigint;
      c record;
      trip_data text;
    begin
      if not p_when then return; end if;
      select count(*) into deprov from json_to_recordset(p_rows) as r(event text, data text)
        -- Only a user event's data is JSON (a row standing for key events has none): cast it under a case.
        where case when r.event = 'user.updated' then (r.data::json->>'active') = 'false'
          else r.event = 'user.deleted' end;
      if deprov = 0 and not exists (select 1 from held_events h where h.client_id = p_dir) then
        return query select v.id, v.event, v."orderingKey", v.data, v.body, v."keyActor", v."keyId", v.n
          from rows from (json_to_recordset(p_rows) as (id uuid, event text, "orderingKey" text, data text,
            body text, "keyActor" uuid, "keyId" uuid))
            with ordinality as v(id, event, "orderingKey", data, body, "keyActor", "keyId", n) order by v.n;
        return;
      end if;
      held := false;
      if deprov > 0 then
        -- A write racing its client's deletion fails as the feed's own check makes it fail (a missing client).
        perform 1 from scim_clients s where s.client_id = p_dir for key share;
        if not found then
          raise exception 'directory event of a missing SCIM client %', p_dir
            using errcode = 'foreign_key_violation', constraint = 'directory_events_client_fkey',
              table = 'directory_events';
        end if;
        insert into deprovisioning_guards (client_id) values (p_dir) on conflict do nothing;
        select * into g from deprovisioning_guards where client_id = p_dir for update;
        if g.enabled or g.tripped_time is not null then
          insert into deprovisioning_marks (client_id, mark_time) select p_dir, p_at from generate_series(1, deprov);
          held := g.tripped_time is not null;
          if not held and g.enabled then
            select count(*) into recent from deprovisioning_marks m
              where m.client_id = p_dir and m.mark_time > p_at - make_interval(secs => g.window_seconds);
            if recent > g.min_count then
              select count(*) into active_users from identities i where i.organization_id = p_org and i.active;
              if recent * 100 > g.share_percent * (active_users + recent) then
                held := true;
                update deprovisioning_guards set tripped_time = p_at, warned = false where client_id = p_dir;
                select * into c from scim_clients s where s.client_id = p_dir;
                trip_data := json_build_object('connection_id', p_dir, 'deprovisioned_in_window', recent,
                  'window_seconds', g.window_seconds, 'active_users', active_users)::text;
                insert into directory_events (id, organization_id, directory_id, source, event, create_time, data)
                  values (p_trip_id, p_org, p_dir, 'scim', 'connection.deprovisioning_held', p_at, trip_data);
                if p_webhook then
                  insert into webhook_outbox (id, client_id, organization_id, event, ordering_key, body, created_at,
                    traceparent)
                  values (p_trip_id, p_dir, p_org, 'connection.deprovisioning_held', p_dir,
                    json_build_object('directory_id', p_dir, 'event', 'connection.deprovisioning_held',
                      'tenant', c.tenant, 'product', c.product, 'data', trip_data::json, 'id', p_trip_id,
                      'created_at', to_char(p_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text,
                    p_at, p_traceparent);
                end if;
              end if;
            end if;
          end if;
        end if;
      end if;
      if not held then
        held := exists (select 1 from json_to_recordset(p_rows) as r("orderingKey" text, "keyActor" uuid)
          join held_events h on h.ordering_key = coalesce(r."keyActor"::text, r."orderingKey")
            and h.client_id = p_dir where coalesce(r."keyActor"::text, r."orderingKey") <> '');
      end if;
      if held then
        -- A row standing for key events is held as it is (its ordering key is its user's or key's id): release
        -- expands it into one event per key, as the statement that writes a flowing batch does.
        insert into held_events (id, client_id, organization_id, event, ordering_key, data, body, create_time,
          traceparent, revoke_keys, key_actor, key_id)
        select v.id, p_dir, p_org, v.event, coalesce(v."keyActor"::text, v."keyId"::text, v."orderingKey"), v.data,
          case when p_webhook then v.body end, p_at, p_traceparent, v.event = 'user.deleted', v."keyActor", v."keyId"
        from rows from (json_to_recordset(p_rows) as (id uuid, event text, "orderingKey" text, data text,
          body text, "keyActor" uuid, "keyId" uuid))
          with ordinality as v(id, event, "orderingKey", data, body, "keyActor", "keyId", n)
        order by v.n;
        update api_keys k set revoke_time = null, revoke_reason = null
        from json_to_recordset(p_rows) as r(event text, "orderingKey" text)
        where r.event = 'user.deleted'
          and k.actor_identity_id = case when r.event = 'user.deleted' then r."orderingKey"::uuid end
          and k.organization_id = p_org and k.revoke_reason = 'ACTOR_DELETED' and k.revoke_time = now();
        return;
      end if;
      return query select v.id, v.event, v."orderingKey", v.data, v.body, v."keyActor", v."keyId", v.n
        from rows from (json_to_recordset(p_rows) as (id uuid, event text, "orderingKey" text, data text,
          body text, "keyActor" uuid, "keyId" uuid))
          with ordinality as v(id, event, "orderingKey", data, body, "keyActor", "keyId", n) order by v.n;
    end $$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    delete from held_events where key_actor is not null or key_id is not null;
    alter table held_events drop column key_actor, drop column key_id;
    drop function roster_route_events(boolean, uuid, text, timestamptz, boolean, text, json, uuid);
  `.execute(db);
  await createRouteEvents(db);
}
