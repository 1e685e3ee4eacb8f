import { type Kysely, sql } from "kysely";

/**
 * The deprovisioning guard (docs/deprovisioning.md): a connection that deactivates or deletes too many users within a
 * rolling window has the effects of its further deprovisioning changes held until an admin releases or discards them.
 *
 * - `deprovisioning_guards`: one row per connection that has one (a missing row is the defaults); the row is also the
 *   lock that serialises the guard's decisions of one connection across instances. `tripped_time` is set while
 *   the connection holds.
 * - `deprovisioning_marks`: one row per deprovisioning event of a connection, counted over the window.
 * - `held_events`: the held events, in order (`seq`), with everything needed to publish them later exactly as they
 *   would have been (feed row, and outbox body when the connection had a webhook). They are not `directory_events`
 *   rows (the feed is gap-free by transaction id) and the feed's retention never sees them.
 * - `roster_route_events`: called by the statement that writes a change's events; it counts, trips, holds, and
 *   returns the rows to publish now. A volatile function's queries take fresh snapshots, so after it has locked the
 *   guard row it sees every mark committed before, whichever instance wrote it.
 * - The rows that stand for API key events (`keyActor`/`keyId`, expanded one per key by the statement that writes
 *   a flowing batch) are returned with a flowing batch and dropped from a held one here; 0032-held-key-events holds
 *   them instead, for release to write.
 * - A held `user.deleted` keeps the identity's keys: the deletion trigger revoked them in this very transaction
 *   (revoke_time = now()), and the function takes that back; release revokes them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table deprovisioning_guards (
      client_id text constraint deprovisioning_guards_pkey primary key
        constraint deprovisioning_guards_client_fkey references scim_clients (client_id) on delete cascade,
      enabled boolean not null default true,
      share_percent integer not null default 20,
      min_count integer not null default 50,
      window_seconds integer not null default 3600,
      tripped_time timestamptz,
      warned boolean not null default false
    );
    create table deprovisioning_marks (
      client_id text not null constraint deprovisioning_marks_client_fkey
        references scim_clients (client_id) on delete cascade,
      mark_time timestamptz not null
    );
    create index deprovisioning_marks_window_idx on deprovisioning_marks (client_id, mark_time);
    create table held_events (
      seq bigint generated always as identity constraint held_events_pkey primary key,
      id uuid not null,
      client_id text not null constraint held_events_client_fkey
        references scim_clients (client_id) on delete cascade,
      organization_id uuid not null,
      event text not null,
      ordering_key text not null,
      data text not null,
      body text,
      create_time timestamptz not null,
      traceparent text,
      revoke_keys boolean not null default false
    );
    create index held_events_client_idx on held_events (client_id, seq);
    create index held_events_key_idx on held_events (ordering_key);

  `.execute(db);
  await createRouteEvents(db);
}

/** The routing function as this migration made it (0032 replaced it; its down restores this one). */
export async function createRouteEvents(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function roster_route_events(p_when boolean, p_org uuid, p_dir text, p_at timestamptz,
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
        held := exists (select 1 from json_to_recordset(p_rows) as r("orderingKey" text) join held_events h
          on h.ordering_key = r."orderingKey" and h.client_id = p_dir);
      end if;
      if held then
        insert into held_events (id, client_id, organization_id, event, ordering_key, data, body, create_time,
          traceparent, revoke_keys)
        select v.id, p_dir, p_org, v.event, v."orderingKey", v.data, case when p_webhook then v.body end, p_at,
          p_traceparent, v.event = 'user.deleted'
        from rows from (json_to_recordset(p_rows) as (id uuid, event text, "orderingKey" text, data text,
          body text, "keyActor" uuid, "keyId" uuid))
          with ordinality as v(id, event, "orderingKey", data, body, "keyActor", "keyId", n)
        where v."keyActor" is null and v."keyId" is null
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
    drop function roster_route_events(boolean, uuid, text, timestamptz, boolean, text, json, uuid);
    drop table held_events;
    drop table deprovisioning_marks;
    drop table deprovisioning_guards;
  `.execute(db);
}
