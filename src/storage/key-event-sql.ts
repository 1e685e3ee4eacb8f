import { type RawBuilder, sql } from "kysely";

/**
 * SQL of the `api_key.*` events that storage writes itself (a deprovisioning's key effects, and their release after
 * a hold): both paths build the same id and the same data, so a receiver cannot tell them apart.
 */

/** A UUIDv7 of the instant `ms` (milliseconds, bigint) whose other bits are those of the random uuid `random`. */
export function uuidv7Of(ms: RawBuilder<unknown>, random: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`encode(set_byte(overlay(uuid_send(${random}) placing substring(int8send(${ms}) from 3) from 1 for 6), 6,
    (get_byte(uuid_send(${random}), 6) & 15) | 112), 'hex')::uuid`;
}

/**
 * The data of an api_key event of the key row `key` (the admin API's fields of a key, without a secret) as JSON
 * text; `event` is the event's kind.
 */
export function keyEventData(key: string, event: RawBuilder<unknown>): RawBuilder<unknown> {
  const k = sql.raw(key);
  return sql`'{"id":' || to_json(${k}.key_id)::text || ',"kind":' || to_json(${k}.kind)::text
    || ',"organization_id":' || to_json(${k}.organization_id)::text || ',"name":' || to_json(${k}.name)::text
    || ',"actor_id":' || coalesce(to_json(${k}.actor_id)::text, 'null')
    || case when ${event} = 'api_key.suspended' then ',"state":"SUSPENDED","suspend_reason":"ACTOR_INACTIVE"}'
      else ',"state":"REVOKED","revoke_reason":' || to_json(${k}.revoke_reason)::text || ',"revoke_time":'
        || to_json(to_char(${k}.revoke_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text || '}'
    end`;
}
