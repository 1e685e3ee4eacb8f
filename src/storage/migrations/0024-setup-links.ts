import { type Kysely, sql } from "kysely";

/**
 * Setup links (docs/setup-links.md): a link an application hands to a customer's IT admin, who then sets up the
 * organization's SCIM connections without an admin token.
 *
 * - `setup_links`: the token is kept only as its SHA-256 digest (a primary-key-like probe finds it); a link lives until
 *   `expire_time` or `revoke_time`.
 * - `scim_clients.activated_time`: when the connection first answered a SCIM request with success
 *   (`connection.activated`); null until then.
 * - Events of a deleted connection stay in the feed as history until retention (`connection.deleted` among them), so
 *   the feed no longer cascades from the client; outbox rows still do (nothing can be signed for a deleted client).
 *   A trigger keeps what the foreign key promised for every other event: an event of a client that no longer exists
 *   is refused with the same constraint name (a write racing the client's deletion answers as for a missing client),
 *   and the client row is locked against deletion until the writing transaction ends, as the key's check did.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table setup_links (
      id uuid constraint setup_links_pkey primary key,
      organization_id uuid not null constraint setup_links_organization_fkey
        references organizations (id) on delete cascade,
      token_digest text not null constraint setup_links_token_digest_key unique,
      intent text not null,
      return_url text,
      create_time timestamptz not null,
      expire_time timestamptz not null,
      revoke_time timestamptz,
      first_open_time timestamptz
    );
    create index setup_links_organization_idx on setup_links (organization_id, id);
    alter table scim_clients add column activated_time timestamptz;
    alter table directory_events drop constraint directory_events_client_fkey;
    create function directory_events_client_check() returns trigger language plpgsql as $$
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
    create trigger directory_events_client_check before insert on directory_events
      for each row execute function directory_events_client_check();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop trigger directory_events_client_check on directory_events;
    drop function directory_events_client_check();
    delete from directory_events e where not exists (select 1 from scim_clients c where c.client_id = e.directory_id);
    alter table directory_events add constraint directory_events_client_fkey foreign key (directory_id)
      references scim_clients (client_id) on delete cascade;
    alter table scim_clients drop column activated_time;
    drop table setup_links;
  `.execute(db);
}
