import { sql } from "kysely";
import type { Db } from "../../storage/database.js";
import { KEY_ROW, releaseStatement } from "../../storage/held-release.js";
import { DEFAULT_GUARD, type GuardSettings, type GuardState, type HeldUser } from "./types.js";

interface GuardRow {
  enabled: boolean;
  share_percent: number;
  min_count: number;
  window_seconds: number;
  tripped_time: Date | null;
}

const settingsOf = (row: GuardRow | undefined): GuardSettings =>
  row === undefined
    ? DEFAULT_GUARD
    : {
        enabled: row.enabled,
        sharePercent: row.share_percent,
        minCount: row.min_count,
        windowSeconds: row.window_seconds,
      };

/**
 * The deprovisioning guard's tables (0030-deprovisioning-guard): settings, the held events and their release. The
 * decision to hold is taken where events are written (storage/event-guard.ts); this repository reads and ends a hold.
 * A release moves held events in bounded batches, each one statement (its feed rows, outbox rows, key revocations,
 * key events and the deletion of the held rows commit together), so a crash between batches leaves the rest held, in
 * order. Rows that stand for key events (KEY_ROW) are not counted as held events.
 */
export class GuardRepo {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  async state(clientId: string, now: Date): Promise<GuardState> {
    const { rows } = await sql<GuardRow>`select enabled, share_percent, min_count, window_seconds, tripped_time
      from deprovisioning_guards where client_id = ${clientId}`.execute(this.#db);
    const guard = rows[0];
    const settings = settingsOf(guard);
    const counts = await sql<{ window_count: number; held_events: number; held_users: number; inactive: number }>`
      select
        (select count(*)::int from deprovisioning_marks m where m.client_id = ${clientId}
          and m.mark_time > ${now}::timestamptz - make_interval(secs => ${settings.windowSeconds})) as window_count,
        (select count(*)::int from held_events h where h.client_id = ${clientId} and not ${KEY_ROW}) as held_events,
        (select count(distinct h.ordering_key)::int from held_events h
          where h.client_id = ${clientId} and h.event like 'user.%') as held_users,
        (select count(*)::int from (select distinct h.ordering_key from held_events h
          where h.client_id = ${clientId} and h.event like 'user.%') u
          where not exists (select 1 from identities i where i.id = u.ordering_key::uuid and i.active)) as inactive
    `.execute(this.#db);
    const c = counts.rows[0] ?? { window_count: 0, held_events: 0, held_users: 0, inactive: 0 };
    const sample = await sql<{ ordering_key: string; event: string; data: string }>`
      select distinct on (first.ordering_key) first.ordering_key, first.event, first.data
      from (select h.ordering_key, h.event, h.data, h.seq from held_events h
        where h.client_id = ${clientId} and h.event like 'user.%' order by h.seq limit 200) first
      order by first.ordering_key, first.seq`.execute(this.#db);
    return {
      ...settings,
      trippedTime: guard?.tripped_time ?? null,
      windowCount: c.window_count,
      heldEvents: c.held_events,
      heldUsers: c.held_users,
      heldUsersStillInactive: c.inactive,
      sample: sample.rows.slice(0, 10).map(heldUserOf),
    };
  }

  async configure(clientId: string, s: GuardSettings): Promise<void> {
    await sql`insert into deprovisioning_guards (client_id, enabled, share_percent, min_count, window_seconds)
      values (${clientId}, ${s.enabled}, ${s.sharePercent}, ${s.minCount}, ${s.windowSeconds})
      on conflict (client_id) do update set enabled = excluded.enabled, share_percent = excluded.share_percent,
        min_count = excluded.min_count, window_seconds = excluded.window_seconds`.execute(this.#db);
  }

  async heldCount(clientId: string): Promise<number> {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from held_events
      where client_id = ${clientId} and not ${KEY_ROW}`.execute(this.#db);
    return rows[0]?.n ?? 0;
  }

  /** Publishes up to `limit` of the oldest held rows as they would have been (held-release.ts); counts events. */
  async releaseBatch(clientId: string, limit: number, now: Date): Promise<number> {
    const { rows } = await releaseStatement(clientId, limit, now).execute(this.#db);
    return rows[0]?.n ?? 0;
  }

  /** Drops every held event; the keys of held users that no longer exist are revoked all the same. */
  async discard(clientId: string, now: Date): Promise<number> {
    const { rows } = await sql<{ n: number }>`
      with b as (delete from held_events where client_id = ${clientId} returning *),
      k as (${revokeDeletedKeys(sql`b`, now)})
      select count(*) filter (where not ${KEY_ROW})::int as n from b`.execute(this.#db);
    return rows[0]?.n ?? 0;
  }

  /**
   * Ends the hold once nothing is held: under the guard row's lock (the one the event writes take), so a change
   * held meanwhile keeps the connection tripped. The window starts afresh. False while events are still held.
   */
  async untripIfEmpty(clientId: string): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      await sql`select 1 from deprovisioning_guards where client_id = ${clientId} for update`.execute(trx);
      const { rows } = await sql<{ held: boolean }>`select exists (select 1 from held_events
        where client_id = ${clientId}) as held`.execute(trx);
      if (rows[0]?.held === true) return false;
      await sql`update deprovisioning_guards set tripped_time = null, warned = false
        where client_id = ${clientId}`.execute(trx);
      await sql`delete from deprovisioning_marks where client_id = ${clientId}`.execute(trx);
      return true;
    });
  }

  /** Marks a trip of `clientId` as announced; true for the one caller (of any instance) that does so first. */
  async claimTripWarning(clientId: string): Promise<Date | undefined> {
    const { rows } = await sql<{ tripped_time: Date }>`update deprovisioning_guards set warned = true
      where client_id = ${clientId} and tripped_time is not null and not warned
      returning tripped_time`.execute(this.#db);
    return rows[0]?.tripped_time;
  }

  /** Connections holding, and events held, over the whole instance: the metric. */
  async totals(): Promise<{ tripped: number; held: number }> {
    const { rows } = await sql<{ tripped: number; held: number }>`select
      (select count(*)::int from deprovisioning_guards where tripped_time is not null) as tripped,
      (select count(*)::int from held_events where not ${KEY_ROW}) as held`.execute(this.#db);
    return rows[0] ?? { tripped: 0, held: 0 };
  }
}

/** The revocations a held `user.deleted` deferred, for the held rows `b` of the statement. */
const revokeDeletedKeys = (b: ReturnType<typeof sql>, now: Date) => sql`
  update api_keys k set revoke_time = ${now}::timestamptz, revoke_reason = 'ACTOR_DELETED',
    update_time = ${now}::timestamptz
  from ${b} join organizations o on o.id = ${b}.organization_id and o.keys_follow_identity
  where ${b}.revoke_keys and k.actor_identity_id = ${b}.ordering_key::uuid and k.organization_id = ${b}.organization_id
    and k.revoke_time is null and not exists (select 1 from identities i where i.id = k.actor_identity_id)`;

function heldUserOf(r: { ordering_key: string; event: string; data: string }): HeldUser {
  const data = JSON.parse(r.data) as { email?: unknown };
  return { id: r.ordering_key, email: typeof data.email === "string" ? data.email : "", event: r.event };
}
