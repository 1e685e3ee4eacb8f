import { type Kysely, sql } from "kysely";

/**
 * Events from any source (docs/events.md): an event is made by a SCIM client's request or by the admin API.
 *
 * - `directory_events.source`: `scim` or `admin`. Events written before are `scim`, except a connection's creation
 *   and deletion, which only the admin API makes.
 * - `directory_events.directory_id` may be null: an event of the organization alone (an API key revoked through the
 *   admin API) concerns no connection.
 * - One rule for the connection an event names, in place of the exception 0024 made for `connection.deleted`: the
 *   connection exists when the event is written (a connection's deletion writes its event before deleting its row),
 *   and the event outlives it as history until retention. The trigger keeps the constraint name and the lock of the
 *   foreign key it stands for: a write racing the connection's deletion answers as for a missing connection.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table directory_events add column source text not null default 'scim'
      constraint directory_events_source_check check (source in ('scim', 'admin'));
    update directory_events set source = 'admin' where event in ('connection.created', 'connection.deleted');
    alter table directory_events alter column directory_id drop not null;
    create or replace function directory_events_client_check() returns trigger language plpgsql as $$
    begin
      if new.directory_id is not null then
        perform 1 from scim_clients where client_id = new.directory_id for key share;
        if not found then
          raise exception 'directory event of a missing SCIM client %', new.directory_id
            using errcode = 'foreign_key_violation', constraint = 'directory_events_client_fkey',
              table = 'directory_events';
        end if;
      end if;
      return new;
    end $$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function directory_events_client_check() returns trigger language plpgsql as $$
    begin
      if new.event <> 'connection.deleted' then
        perform 1 from scim_clients where client_id = new.directory_id for key share;
        if not found then
          raise exception 'directory event of a missing SCIM client %', new.directory_id
            using errcode = 'foreign_key_violation', constraint = 'directory_events_client_fkey',
              table = 'directory_events';
        end if;
      end if;
      return new;
    end $$;
    delete from directory_events where directory_id is null;
    alter table directory_events alter column directory_id set not null;
    alter table directory_events drop column source;
  `.execute(db);
}
