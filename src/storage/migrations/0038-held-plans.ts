import { type Kysely, sql } from "kysely";

/**
 * The checks that read `held_events` keep their index whatever plan was cached. `held_events` is empty nearly all
 * the time, so it is empty whenever autovacuum analyzes it between trips, and a plan made then — a prepared
 * statement's generic plan, or a PL/pgSQL function's cached plan, on every pooled connection — reads it by a
 * sequential scan. Such plans stay until the table is next analyzed, up to a minute after a trip has filled it, and
 * meanwhile every held write read every held row of the table several times: measured, 15 597 sequential scans
 * reading 20 million rows in the minute after a trip of a 5 000-user directory, and not one index scan.
 *
 * - `roster_route_events` plans with sequential scans switched off: every table it reads has the index it needs
 *   (the guard row by its key, the window's marks by `(client_id, mark_time)`, the held rows by
 *   `(client_id, ordering_key)` and `(client_id, seq)`, the counters by their key).
 * - `roster_holds_any(connection, keys)`: whether a connection holds an event of any of `keys`, for the statement
 *   that writes a change that deprovisions nothing (storage/event-guard.ts). It is called only while the
 *   connection's guard is tripped (held events exist only then), so writes of a connection that holds nothing
 *   never reach it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter function roster_route_events(boolean, uuid, text, timestamptz, boolean, text, json, uuid)
      set enable_seqscan = off;
    create function roster_holds_any(p_dir text, p_keys text[]) returns boolean
    language plpgsql stable set enable_seqscan = off as $$
    begin
      return exists (select 1 from unnest(p_keys) as k(key), lateral (select 1 from held_events h
        where h.client_id = p_dir and h.ordering_key = k.key limit 1) h);
    end $$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop function roster_holds_any(text, text[]);
    alter function roster_route_events(boolean, uuid, text, timestamptz, boolean, text, json, uuid)
      reset enable_seqscan;
  `.execute(db);
}
