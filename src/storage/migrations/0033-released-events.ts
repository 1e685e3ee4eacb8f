import { type Kysely, sql } from "kysely";

/**
 * A hold changes nothing of what its events become once released (docs/deprovisioning.md, "Release or discard"):
 *
 * - `directory_events.release_time`: when a held event was released into the feed; null for every event written with
 *   its change. The feed's retention and its tokens' time count from when an event entered the feed,
 *   `coalesce(release_time, create_time)`, so a hold longer than the retention is not pruned right after its release
 *   and a reader's token after it does not read as expired. The retention's BRIN index moves to that expression: rows
 *   arrive in its order, where a released row (an old `create_time`, written now) would widen every `create_time`
 *   range it lands in back to the start of its hold.
 * - `held_events.legacy_keys`: a change held before 0032-held-key-events, whose hold did not keep the rows standing
 *   for its `api_key.*` events; release writes them right after it, as it does for a key row (storage/held-release.ts).
 *   Marked once, here, for the rows held now: a `user.deleted` whose key row does not follow it (every deletion has
 *   one since 0032), and a deactivation (`user.updated`, inactive) held before the connection's first key row that
 *   neither has its key row after it nor follows an inactive event of the same user (not a change of `active`, which
 *   has no key events). A deactivation of a user whose earlier state is not held cannot be told from a change of an
 *   already inactive user: it is marked, so its keys' suspension is announced at least once (possibly again), never
 *   missed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table directory_events add column release_time timestamptz;
    create index directory_events_feed_time_idx on directory_events
      using brin ((coalesce(release_time, create_time)));
    drop index directory_events_create_time_idx;
    alter table held_events add column legacy_keys boolean not null default false;
    update held_events e set legacy_keys = true
    where e.key_actor is null and e.key_id is null
      and case
        when e.event = 'user.deleted' then true
        when e.event = 'user.updated' then (e.data::json->>'active') = 'false'
          and not exists (select 1 from held_events k where k.client_id = e.client_id and k.seq < e.seq
            and (k.key_actor is not null or k.key_id is not null))
          and coalesce((select case when p.event = 'user.updated' then (p.data::json->>'active') = 'false' end
            from held_events p where p.client_id = e.client_id and p.ordering_key = e.ordering_key and p.seq < e.seq
            order by p.seq desc limit 1), false) = false
        else false end
      -- The next held row of the same user is its key row when the change kept one (key rows take the user's id as
      -- their ordering key, and one user's changes are serialised by its row lock).
      and coalesce((select n.key_actor is not null from held_events n
        where n.client_id = e.client_id and n.ordering_key = e.ordering_key and n.seq > e.seq
        order by n.seq limit 1), false) = false;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table held_events drop column legacy_keys;
    create index directory_events_create_time_idx on directory_events using brin (create_time);
    drop index directory_events_feed_time_idx;
    alter table directory_events drop column release_time;
  `.execute(db);
}
