import { type RawBuilder, sql } from "kysely";
import { keyEventData, uuidv7Of } from "./key-event-sql.js";

/** A held row that stands for key events (0032-held-key-events), not an event of its own. */
export const KEY_ROW = sql`(key_actor is not null or key_id is not null)`;

/**
 * The statement that publishes up to `limit` of the oldest held events of `clientId` as they would have been: feed
 * rows and outbox rows with their original ids and times, in their order, and the key effects applied. A held
 * deletion's keys are revoked now (`ACTOR_DELETED`); each held row standing for key events becomes one
 * `api_key.suspended` / `api_key.revoked` per key, placed where the change put it, as storage/event-store.ts expands
 * a flowing batch's: suspended for the user's keys that follow it and are live, revoked for the keys its deletion
 * revoked — in this statement (`k`), or in an earlier batch of the same release when a batch boundary fell between
 * the deletion and its key row. A change held before key rows were kept (`legacy_keys`, 0033-released-events) gets
 * the key events its key row would have made, right after it. The ids of key events are UUIDv7 of the held change's
 * time. Feed rows carry `release_time` (now): the feed's retention counts from it.
 *
 * Answers the number of held events published (key rows not counted).
 */
export function releaseStatement(clientId: string, limit: number, now: Date): RawBuilder<{ n: number }> {
  return sql<{ n: number }>`
    with b as (
      delete from held_events where seq in (select h.seq from held_events h where h.client_id = ${clientId}
        order by h.seq limit ${limit})
      returning *
    ), k as (
      update api_keys k set revoke_time = ${now}::timestamptz, revoke_reason = 'ACTOR_DELETED',
        update_time = ${now}::timestamptz
      from b join organizations o on o.id = b.organization_id and o.keys_follow_identity
      where b.revoke_keys and k.actor_identity_id = b.ordering_key::uuid and k.organization_id = b.organization_id
        and k.revoke_time is null and not exists (select 1 from identities i where i.id = k.actor_identity_id)
      returning k.key_id, k.kind, k.organization_id, k.name, k.actor_id, k.actor_identity_id, k.revoke_reason,
        k.revoke_time
    ), r as (
      select b.seq, b.key_actor, b.key_id, b.event, b.body, b.organization_id, b.create_time, b.traceparent
      from b where ${KEY_ROW}
      union all
      select b.seq, b.ordering_key::uuid, null::uuid, ${legacyKind(sql`b.event`)}, ${legacyHead(sql`b`)},
        b.organization_id, b.create_time, b.traceparent
      from b where b.legacy_keys and not ${KEY_ROW}
    ), x as (
      select b.seq, 0::bigint as m, b.id, b.event, b.ordering_key, b.data, b.body, b.organization_id, b.create_time,
        b.traceparent
      from b where not ${KEY_ROW}
      union all
      select r.seq, row_number() over (partition by r.seq order by kk.key_id) as m, kk.id, r.event,
        kk.key_id::text, kk.data,
        r.body || kk.data || ',"id":"' || kk.id::text || '","created_at":'
          || to_json(to_char(r.create_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text || '}',
        r.organization_id, r.create_time, r.traceparent
      from r cross join lateral (
        select t.key_id,
          ${uuidv7Of(sql`(extract(epoch from r.create_time) * 1000)::bigint`, sql`g.u`)} as id,
          ${keyEventData("t", sql`r.event`)} as data
        from (${keysOf(sql`r`)}) t, lateral (select gen_random_uuid() as u where t.key_id is not null) g
      ) kk
    ), e as (
      insert into directory_events (id, organization_id, directory_id, event, create_time, data, release_time)
      select x.id, x.organization_id, ${clientId}, x.event, x.create_time, x.data, ${now}::timestamptz
      from x order by x.seq, x.m
    ), o as (
      insert into webhook_outbox (id, client_id, organization_id, event, ordering_key, body, created_at, traceparent)
      select x.id, ${clientId}, x.organization_id, x.event, x.ordering_key, x.body, ${now}::timestamptz,
        x.traceparent
      from x where x.body is not null order by x.seq, x.m
    )
    select count(*) filter (where not ${KEY_ROW})::int as n from b`;
}

/** The key events' kind of a held user change `event` that kept no key row: a deletion revokes, else suspends. */
const legacyKind = (event: RawBuilder<unknown>) =>
  sql`case when ${event} = 'user.deleted' then 'api_key.revoked' else 'api_key.suspended' end`;

/**
 * The webhook body's beginning, up to `"data":`, of the key events of the held user change `b`, as a key row holds it
 * (storage/event-port.ts webhookBodyHead): the change's own body gives the connection, tenant and product as they
 * were (a `json` value keeps its text). Null when the change has no body (no webhook).
 */
function legacyHead(b: RawBuilder<unknown>): RawBuilder<unknown> {
  const field = (name: string) => sql`(${b}.body::json->${sql.lit(name)})::text`;
  return sql`'{"directory_id":' || ${field("directory_id")} || ',"event":' || to_json(${legacyKind(sql`${b}.event`)})::text
    || ',"tenant":' || ${field("tenant")} || ',"product":' || ${field("product")} || ',"data":'`;
}

/**
 * The keys a held key row `b` names: live keys that follow its user (suspended), keys its user's deletion revoked
 * (revoked), or the one key it names when that key is revoked. The statement's snapshot does not see `k`'s
 * revocations, so those come from `k` and the ones of earlier batches from `api_keys`: the two never overlap.
 */
function keysOf(b: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`
    select a.key_id, a.kind, a.organization_id, a.name, a.actor_id, a.revoke_reason, a.revoke_time from api_keys a
    where a.organization_id = ${b}.organization_id and (
      (${b}.key_id is not null and a.key_id = ${b}.key_id and a.revoke_time is not null)
      or (${b}.key_actor is not null and a.actor_identity_id = ${b}.key_actor
        and exists (select 1 from organizations o where o.id = a.organization_id and o.keys_follow_identity)
        and case when ${b}.event = 'api_key.suspended'
          then a.revoke_time is null and (a.expire_time is null or a.expire_time > ${b}.create_time)
          else a.revoke_time is not null and a.revoke_reason = 'ACTOR_DELETED' end))
    union all
    select k.key_id, k.kind, k.organization_id, k.name, k.actor_id, k.revoke_reason, k.revoke_time from k
    where ${b}.event = 'api_key.revoked' and ${b}.key_actor is not null and k.actor_identity_id = ${b}.key_actor`;
}
