import { type Kysely, sql } from "kysely";

/**
 * `roster_hold_batch`: holds a batch that deprovisions nothing behind an earlier held event of one of its resources,
 * for the statement that writes the change (storage/event-guard.ts), which calls it only when its snapshot saw the
 * connection tripped and one of the batch's keys held. Answers whether it held the batch.
 *
 * It takes the connection's guard row `for share`, as a held deprovisioning write does: a release ends the hold
 * under the row's lock (for update) only once nothing is held, so it waits for this write and then finds its rows.
 * The locking read sees the row's latest version: if the hold ended meanwhile, every held event was published by
 * then, and the batch flows after them (false). Being a function, the insert into `held_events` is in the plan of
 * the writes that hold, not of every write: a flowing write opens none of that table's indexes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function roster_hold_batch(p_when boolean, p_org uuid, p_dir text, p_at timestamptz, p_webhook boolean,
      p_traceparent text, p_rows json) returns boolean
    language plpgsql as $$
    begin
      if not p_when then return false; end if;
      perform 1 from deprovisioning_guards g where g.client_id = p_dir and g.tripped_time is not null for share;
      if not found then return false; end if;
      insert into held_events (id, client_id, organization_id, event, ordering_key, data, body, create_time,
        traceparent, key_actor, key_id)
      select v.id, p_dir, p_org, v.event, coalesce(v."keyActor"::text, v."keyId"::text, v."orderingKey"), v.data,
        case when p_webhook then v.body end, p_at, p_traceparent, v."keyActor", v."keyId"
      from rows from (json_to_recordset(p_rows) as (id uuid, event text, "orderingKey" text, data text, body text,
        "keyActor" uuid, "keyId" uuid)) with ordinality as v(id, event, "orderingKey", data, body, "keyActor", "keyId", n)
      order by v.n;
      return true;
    end $$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop function roster_hold_batch(boolean, uuid, text, timestamptz, boolean, text, json)`.execute(db);
}
