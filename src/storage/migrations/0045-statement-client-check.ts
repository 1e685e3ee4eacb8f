import { type Kysely, sql } from "kysely";

/**
 * A feed row of a SCIM connection is refused when the connection no longer exists, and the connection's row is
 * locked against deletion until the writing transaction ends: what a foreign key would promise, were the events not
 * to outlive their connection (0024). A row trigger did it for each row, in PL/pgSQL — a function call, a query of
 * its own and a lock per event, 7 % of PostgreSQL's CPU in a PUT. Every feed row is now written by a statement that
 * checks its connection once itself, in its own plan:
 *
 * - a change's events (storage/event-store.ts publishEvents) lock the connection's row in the statement that writes
 *   them and call `roster_client_gone` only when the row is missing, which raises the error the trigger raised
 *   (`foreign_key_violation`, constraint `directory_events_client_fkey`);
 * - the deprovisioning guard's function checks it before it writes a feed row (0040; a held row has a real foreign
 *   key), and a release of held events
 *   writes only the held rows it deletes, which the connection's deletion (cascading to them) either waits for or
 *   has removed first.
 *
 * The outbox keeps its trigger (0031): only a connection with a webhook writes there.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop trigger directory_events_client_check on directory_events;
    drop function directory_events_client_check();
    create function roster_client_gone(p_dir text) returns boolean language plpgsql as $$
    begin
      raise exception 'directory event of a missing SCIM client %', p_dir
        using errcode = 'foreign_key_violation', constraint = 'directory_events_client_fkey',
          table = 'directory_events';
    end $$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop function roster_client_gone(text);
    create function directory_events_client_check() returns trigger language plpgsql as $$
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
    create trigger directory_events_client_check before insert on directory_events
      for each row execute function directory_events_client_check();
  `.execute(db);
}
