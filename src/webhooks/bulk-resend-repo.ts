import { sql } from "kysely";
import type { Db } from "../storage/database.js";

/** One call re-queues at most this many events. */
export const MAX_BULK_RESEND = 10_000;

export interface BulkResendRequest {
  readonly clientId: string;
  readonly organizationId: string;
  /** Events whose failed attempt is this recent or newer. */
  readonly since: Date;
  readonly now: Date;
}

/**
 * Re-queues, in the outbox, every event of the client whose latest attempt failed (since `since`) and that is not
 * pending any more (not retrying, not queued): the logged payload again, with the same id (the `webhook-id`), in the
 * order the events failed, at most MAX_BULK_RESEND. They go out through the dispatcher like any event — signed anew,
 * one at a time per resource — after the events already queued for their resource. Returns how many were queued.
 * Needs the event log (log_webhook_events): without it nothing of a failed event is kept.
 */
export async function requeueFailed(db: Db, r: BulkResendRequest): Promise<number> {
  const { rows } = await sql<{ id: string }>`
    insert into webhook_outbox (id, client_id, organization_id, event, ordering_key, body, created_at)
    select f.event_id, ${r.clientId}, ${r.organizationId}::uuid, f.event,
      coalesce(f.payload::json -> 'data' -> 'group' ->> 'id', f.payload::json -> 'data' ->> 'id'), f.payload,
      ${r.now}::timestamptz
    from (
      select distinct on (e.event_id) e.event_id, e.event, e.payload, e.attempted_at, e.id as attempt_id
      from webhook_events e
      where e.client_id = ${r.clientId} and e.success = false and e.attempted_at >= ${r.since}
      order by e.event_id, e.attempted_at desc, e.id desc
    ) f
    where not exists (
        select 1 from webhook_events s where s.event_id = f.event_id and s.success and s.attempted_at >= f.attempted_at)
      and not exists (select 1 from webhook_outbox o where o.id = f.event_id)
    -- Attempt ids increase with time (attempt-id.ts): the order the events failed, per resource their order.
    order by f.attempted_at, f.attempt_id
    limit ${MAX_BULK_RESEND}
    on conflict (id) do nothing
    returning id`.execute(db);
  return rows.length;
}
