import { type Kysely, sql } from "kysely";

/**
 * A deleted connection's webhook delivers what it owes (docs/webhooks.md, "A deleted connection"): its pending events
 * and its `connection.deleted`, written in the deletion's transaction, go to the endpoint it had when it was deleted.
 *
 * - `retired_webhooks`: the endpoint of a deleted connection (URL, sealed secret, retry setting) while outbox rows of
 *   it are pending, keyed by the client id and the last outbox row it owes (`last_seq`): a connection created again
 *   with the same client id has its own endpoint for its own, later, rows. Deleted with the delivery of its
 *   `connection.deleted` (and, should that never come, by the hourly prune once none of its rows is left).
 * - The outbox no longer cascades from the client. A trigger keeps what the foreign key promised to writers — an event
 *   of a client that no longer exists is refused with the same constraint name, and the client row is locked against
 *   deletion until the writing transaction ends, as the key's check did (0024 did the same for the feed) — and the
 *   client's deletion retires its endpoint when rows are pending and it has a URL (and its organization is not being
 *   deleted with it); otherwise its pending rows go with it, as before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table retired_webhooks (
      client_id text not null,
      last_seq bigint not null,
      organization_id uuid not null,
      webhook_url text not null,
      webhook_secret_sealed text,
      webhook_retry text not null,
      retire_time timestamptz not null,
      constraint retired_webhooks_pkey primary key (client_id, last_seq)
    );
    alter table webhook_outbox drop constraint webhook_outbox_client_fkey;
    create function webhook_outbox_client_check() returns trigger language plpgsql as $$
    begin
      perform 1 from scim_clients where client_id = new.client_id for key share;
      if not found then
        raise exception 'webhook event of a missing SCIM client %', new.client_id
          using errcode = 'foreign_key_violation', constraint = 'webhook_outbox_client_fkey', table = 'webhook_outbox';
      end if;
      return new;
    end $$;
    create trigger webhook_outbox_client_check before insert on webhook_outbox
      for each row execute function webhook_outbox_client_check();
    create function scim_clients_retire_webhook() returns trigger language plpgsql as $$
    declare
      owed_after bigint;
      last bigint;
    begin
      -- Rows up to an earlier retirement of the same client id belong to that one.
      select coalesce(max(r.last_seq), 0) into owed_after from retired_webhooks r where r.client_id = old.client_id;
      select max(o.seq) into last from webhook_outbox o where o.client_id = old.client_id and o.seq > owed_after;
      if last is null then
        return null;
      end if;
      if old.webhook_url is not null and exists (select 1 from organizations g where g.id = old.organization_id) then
        insert into retired_webhooks (client_id, last_seq, organization_id, webhook_url, webhook_secret_sealed,
          webhook_retry, retire_time)
        values (old.client_id, last, old.organization_id, old.webhook_url, old.webhook_secret_sealed,
          old.webhook_retry, now());
      else
        delete from webhook_outbox o where o.client_id = old.client_id and o.seq > owed_after;
      end if;
      return null;
    end $$;
    create trigger scim_clients_retire_webhook after delete on scim_clients
      for each row execute function scim_clients_retire_webhook();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop trigger scim_clients_retire_webhook on scim_clients;
    drop function scim_clients_retire_webhook();
    drop trigger webhook_outbox_client_check on webhook_outbox;
    drop function webhook_outbox_client_check();
    delete from webhook_outbox o where not exists (select 1 from scim_clients c where c.client_id = o.client_id);
    alter table webhook_outbox add constraint webhook_outbox_client_fkey foreign key (client_id)
      references scim_clients (client_id) on delete cascade;
    drop table retired_webhooks;
  `.execute(db);
}
