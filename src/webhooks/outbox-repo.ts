import { sql } from "kysely";
import type { Db } from "../storage/database.js";
import { preparedStatement } from "../storage/prepared.js";
import { ATTEMPT_COLUMNS, type AttemptRecord } from "./event-log-repo.js";
import type { ClaimedEvent } from "./outbox-claim-repo.js";

const OUTBOX_RELEASE = preparedStatement("outbox_release");
const OUTBOX_RECORD_AND_START = preparedStatement("outbox_record_and_start");

export {
  type Claim,
  type ClaimedEvent,
  type ClaimOptions,
  claimDue,
  INTERRUPTED_ERROR,
  type OutboxKey,
} from "./outbox-claim-repo.js";

/**
 * Claimed events that will not be sent now (shutdown, a head waiting for its retry, bookkeeping that failed): back to
 * the pool at once. None of them was sent; a start marked by a statement whose answer was lost is taken back.
 */
export async function releaseClaimed(db: Db, events: readonly ClaimedEvent[]): Promise<void> {
  if (events.length === 0) return;
  await OUTBOX_RELEASE.sql`
    update webhook_outbox set claimed_until = null, claim_token = null, claimed_by = null,
      attempts = attempts - (attempt_started_at is not null)::int, attempt_started_at = null
    where (seq, claim_token) in (select * from unnest(${events.map((e) => e.seq)}::bigint[],
      ${events.map((e) => e.claimToken)}::text[]))
  `.execute(db);
}

/**
 * The rows of claims whose answers were lost (the claim may or may not have committed): back to the pool at once,
 * as releaseClaimed does, and the head's attempt the claim marked started is taken back — it was never sent. A scan
 * of the outbox, which holds only undelivered events; run only after a failed claim. Returns the tokens whose rows
 * it found: a token found nowhere belongs to a claim that did not commit — or that has not committed yet (a commit
 * waiting for a synchronous standby, its connection cut: its rows look unclaimed until it goes through).
 */
export async function releaseClaimTokens(db: Db, claimTokens: readonly string[]): Promise<Set<string>> {
  if (claimTokens.length === 0) return new Set();
  const rows = await sql<{ claim_token: string }>`
    with released as (
      update webhook_outbox w set claimed_until = null, claim_token = null, claimed_by = null,
        attempts = w.attempts - (w.attempt_started_at is not null)::int, attempt_started_at = null
      from webhook_outbox o
      where o.seq = w.seq and w.claim_token = any(${claimTokens}::text[])
      returning o.claim_token
    )
    select distinct claim_token from released
  `.execute(db);
  return new Set(rows.rows.map((r) => r.claim_token));
}

/**
 * Releases the rows claimed under this dispatcher's id by a claim it does not hold in flight (`keep`): after a
 * failover, the new primary may lack the last records and releases the old one acknowledged (bookkeeping commits
 * without waiting for the standby), so rows it already settled are claimed there again under a token it forgot, and
 * its heartbeat keeps anyone from taking them over. Run once after an outage: a scan of the outbox, which is small
 * while deliveries flow; at most a re-send (docs/webhooks.md).
 */
export async function releaseOwnClaims(db: Db, owner: string, keep: readonly string[]): Promise<number> {
  const result = await sql`
    update webhook_outbox set claimed_until = null, claim_token = null, claimed_by = null,
      attempts = attempts - (attempt_started_at is not null)::int, attempt_started_at = null
    where claimed_by = ${owner}::uuid and not (claim_token = any(${[...keep]}::text[]))`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

export interface Finished {
  readonly event: ClaimedEvent;
  /** The attempt to keep in the event log (null when logging is off). */
  readonly attempt: AttemptRecord | null;
  /** A failed delivery to try again then (webhook.retry = backoff); undefined: the event is done. */
  readonly retryAt?: Date | undefined;
}

/**
 * One statement for a batch of bookkeeping: finished events are deleted from the outbox (a failed delivery is not
 * retried unless the connection opted in: then it goes back with its retry time) and their attempts go to
 * the event log; the events to send next are marked started — their
 * attempt counted, `attempt_started_at` set — before they are sent, so a takeover after a crash knows exactly which
 * attempt was under way. Returns the seqs marked started; an event missing from it was taken over by another
 * dispatcher (its lease ran out, or this one was taken for dead) and must not be sent by this one.
 * A row whose lease was taken over keeps its new claim: neither deleted nor marked.
 */
export async function recordAndStart(
  db: Db,
  finished: readonly Finished[],
  start: readonly ClaimedEvent[],
  now: Date,
): Promise<Set<number>> {
  if (finished.length === 0 && start.length === 0) return new Set();
  const attempts = finished.flatMap((d) => (d.attempt === null ? [] : [d.attempt]));
  const done = finished.filter((d) => d.retryAt === undefined);
  const retried = finished.filter((d) => d.retryAt !== undefined);
  const rows = await OUTBOX_RECORD_AND_START.sql<{ seq: number }>`
    with done as (
      delete from webhook_outbox
      where (seq, claim_token) in (select * from unnest(${done.map((d) => d.event.seq)}::bigint[],
        ${done.map((d) => d.event.claimToken)}::text[]))
      returning client_id, seq, event
    ), farewell as (
      -- A deleted connection's last delivery is done: its endpoint and secret go (0031-retired-webhooks).
      delete from retired_webhooks r using done d
      where d.event = 'connection.deleted' and r.client_id = d.client_id and r.last_seq = d.seq
    ), retried as (
      -- Back to the pool, not claimable before its retry time; the events behind it wait (order per resource).
      update webhook_outbox w set next_attempt_at = r.at, claimed_until = null, claim_token = null,
        claimed_by = null, attempt_started_at = null
      from unnest(${retried.map((d) => d.event.seq)}::bigint[], ${retried.map((d) => d.event.claimToken)}::text[],
        ${retried.map((d) => (d.retryAt ?? new Date(0)).toISOString())}::timestamptz[]) as r(seq, token, at)
      where w.seq = r.seq and w.claim_token = r.token
    ), logged as (
      insert into webhook_events (${ATTEMPT_COLUMNS})
      select ${ATTEMPT_COLUMNS} from json_populate_recordset(null::webhook_events, ${JSON.stringify(attempts)}::json) a
      -- A connection deleted while its event was in flight took its event log with it: the attempt goes nowhere.
      where exists (select 1 from scim_clients c where c.client_id = a.client_id for key share)
      -- Written again after its answer was lost (OwedBookkeeping): once is enough.
      on conflict (id) do nothing
    )
    update webhook_outbox set attempts = attempts + 1, attempt_started_at = ${now}::timestamptz
    where (seq, claim_token) in (select * from unnest(${start.map((e) => e.seq)}::bigint[],
      ${start.map((e) => e.claimToken)}::text[]))
    returning seq
  `.execute(db);
  return new Set(rows.rows.map((r) => Number(r.seq)));
}

/** The dispatcher's bookkeeping writes, bound to its pool (GroupCommit and OwedBookkeeping write through these). */
export interface OutboxBookkeeping {
  recordAndStart(finished: readonly Finished[], start: readonly ClaimedEvent[], now: Date): Promise<Set<number>>;
  releaseClaimed(events: readonly ClaimedEvent[]): Promise<void>;
  releaseClaimTokens(claimTokens: readonly string[]): Promise<Set<string>>;
  releaseOwnClaims(owner: string, keep: readonly string[]): Promise<number>;
}

export const outboxBookkeeping = (db: Db): OutboxBookkeeping => ({
  recordAndStart: (finished, start, now) => recordAndStart(db, finished, start, now),
  releaseClaimed: (events) => releaseClaimed(db, events),
  releaseClaimTokens: (claimTokens) => releaseClaimTokens(db, claimTokens),
  releaseOwnClaims: (owner, keep) => releaseOwnClaims(db, owner, keep),
});
