import { sql } from "kysely";
import { type Db, PREPARED } from "../storage/database.js";
import type { AttemptRecord } from "./event-log.js";

/** A claimed outbox row with the client's delivery settings as they are now. */
export interface ClaimedEvent {
  readonly seq: number;
  readonly id: string;
  readonly clientId: string;
  readonly organizationId: string;
  readonly event: string;
  readonly orderingKey: string;
  readonly body: string;
  /** How many times this row has been claimed, this claim included (> 1 after an interrupted delivery). */
  readonly claims: number;
  readonly claimToken: string;
  readonly webhookUrl: string | null;
  readonly webhookSecretSealed: string | null;
  readonly logWebhookEvents: boolean;
}

interface ClaimRow {
  seq: number;
  id: string;
  client_id: string;
  organization_id: string;
  event: string;
  ordering_key: string;
  body: string;
  claims: number;
  webhook_url: string | null;
  webhook_secret_sealed: string | null;
  log_webhook_events: boolean;
}

/**
 * Claims up to `limit` due events, each the oldest pending row of its (client, resource) key — so a key whose head
 * is claimed by anyone (in flight) yields nothing, and one key's events go out one at a time in commit order —
 * together with up to `chain - 1` rows that follow each head in its key (a backlog of one resource is then sent
 * back to back, not one claim and one commit per event). The head's lease is `leaseUntil`; the n-th follower's is
 * `n × leaseStepMs` longer, as it is sent after the n rows before it. Followers are never claimable by themselves
 * while an older row of their key exists, so taking them with their head keeps the order.
 * `FOR UPDATE SKIP LOCKED` keeps concurrent dispatchers (any number of instances) from claiming one head twice;
 * the lease (`claimed_until`) returns a row to the pool if its claimer dies before recording the attempt.
 * Portable SQL: no advisory locks, no LISTEN/NOTIFY (DESIGN.md "Runtime shape").
 */
export async function claimDue(
  db: Db,
  options: { limit: number; chain?: number; now: Date; leaseUntil: Date; leaseStepMs?: number; claimToken: string },
): Promise<ClaimedEvent[]> {
  const chain = Math.max(1, options.chain ?? 1);
  const { rows } = await sql<ClaimRow>`${sql.raw(PREPARED)}
    with heads as (
      select o.seq, o.client_id, o.ordering_key from webhook_outbox o
      where (o.claimed_until is null or o.claimed_until < ${options.now})
        and not exists (
          select 1 from webhook_outbox p
          where p.client_id = o.client_id and p.ordering_key = o.ordering_key and p.seq < o.seq
        )
      order by o.seq
      limit ${options.limit}
      for update of o skip locked
    ), due as (
      select f.seq, f.n - 1 as rank from heads h
      cross join lateral (
        select k.seq, row_number() over (order by k.seq) as n from (
          select o2.seq from webhook_outbox o2
          where o2.client_id = h.client_id and o2.ordering_key = h.ordering_key and o2.seq >= h.seq
          order by o2.seq
          limit ${chain}
        ) k
      ) f
    )
    update webhook_outbox w
    set claimed_until = ${options.leaseUntil}::timestamptz
          + due.rank * ${options.leaseStepMs ?? 0}::bigint * interval '1 millisecond',
        claim_token = ${options.claimToken}, claims = w.claims + 1
    from due, scim_clients c
    where w.seq = due.seq and c.client_id = w.client_id
    returning w.seq, w.id, w.client_id, w.organization_id, w.event, w.ordering_key, w.body, w.claims,
      c.webhook_url, c.webhook_secret_sealed, c.log_webhook_events
  `.execute(db);
  return rows
    .map((r) => ({
      seq: r.seq,
      id: r.id,
      clientId: r.client_id,
      organizationId: r.organization_id,
      event: r.event,
      orderingKey: r.ordering_key,
      body: r.body,
      claims: r.claims,
      claimToken: options.claimToken,
      webhookUrl: r.webhook_url,
      webhookSecretSealed: r.webhook_secret_sealed,
      logWebhookEvents: r.log_webhook_events,
    }))
    .sort((a, b) => a.seq - b.seq);
}

/** Claimed events that will not be sent now (shutdown): back to the pool at once, this claim not counted. */
export async function releaseClaimed(db: Db, events: readonly ClaimedEvent[]): Promise<void> {
  if (events.length === 0) return;
  await sql`${sql.raw(PREPARED)}
    update webhook_outbox set claimed_until = null, claim_token = null, claims = greatest(claims - 1, 0)
    where (seq, claim_token) in (select * from unnest(${events.map((e) => e.seq)}::bigint[],
      ${events.map((e) => e.claimToken)}::text[]))
  `.execute(db);
}

/**
 * Finishes claimed events in one statement: the attempts to keep go to the event log, and the outbox rows are
 * deleted (a failed delivery is not retried, spec 6; with logging off nothing of the payload remains).
 * A row whose lease was taken over by another dispatcher keeps its new claim.
 */
export async function completeClaimed(
  db: Db,
  done: readonly { readonly event: ClaimedEvent; readonly attempt: AttemptRecord | null }[],
): Promise<void> {
  if (done.length === 0) return;
  const seqs = done.map((d) => d.event.seq);
  const tokens = done.map((d) => d.event.claimToken);
  const attempts = done.flatMap((d) => (d.attempt === null ? [] : [d.attempt]));
  const claimedBy = sql<boolean>`(seq, claim_token) in (select * from unnest(${seqs}::bigint[], ${tokens}::text[]))`;
  const deleteClaimed = sql`${sql.raw(PREPARED)}delete from webhook_outbox where ${claimedBy}`;
  if (attempts.length === 0) {
    await deleteClaimed.execute(db);
    return;
  }
  await db.transaction().execute(async (trx) => {
    await trx.insertInto("webhook_events").values(attempts).execute();
    await deleteClaimed.execute(trx);
  });
}
