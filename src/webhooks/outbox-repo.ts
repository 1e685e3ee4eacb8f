import { type RawBuilder, sql } from "kysely";
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

/** A resource's place in the outbox's (client_id, ordering_key) order: where the next claim goes on from. */
export interface OutboxKey {
  readonly clientId: string;
  readonly orderingKey: string;
}

export interface Claim {
  /** In seq order. */
  readonly events: ClaimedEvent[];
  /** The key of the last head claimed, to pass as `after` next time (round robin); undefined when none. */
  readonly cursor: OutboxKey | undefined;
}

export interface ClaimOptions {
  readonly limit: number;
  readonly chain?: number;
  readonly now: Date;
  readonly leaseUntil: Date;
  readonly leaseStepMs?: number;
  readonly claimToken: string;
  /** Look at the resources after this key first, then wrap around to the first one (fair under overload). */
  readonly after?: OutboxKey | undefined;
}

export interface ClaimRow {
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
  rank: number;
  pos: number;
}

/**
 * Claims up to `limit` due events, each the oldest pending row of its (client, resource) key — so a key whose head
 * is claimed by anyone (in flight) yields nothing, and one key's events go out one at a time in commit order —
 * together with up to `chain - 1` rows that follow each head in its key (a backlog of one resource is then sent
 * back to back, not one claim and one commit per event). The head's lease is `leaseUntil`; the n-th follower's is
 * `n × leaseStepMs` longer, as it is sent after the n rows before it. Followers are never claimable by themselves
 * while an older row of their key exists, so taking them with their head keeps the order.
 *
 * Heads are found by a skip scan of the (client_id, ordering_key, seq) index — one index probe per resource, in key
 * order from `after`, stopping at `limit` claimable heads — not by scanning the backlog in seq order, which reads
 * every follower of every resource in flight (a 5 000-event backlog of 20 groups: 30–70 ms a claim, and seconds
 * under a generic plan cached while the table was empty). For the same reason the statement is planned per
 * execution (not a named prepared statement): the outbox swings between empty and large.
 * `FOR UPDATE SKIP LOCKED` keeps concurrent dispatchers (any number of instances) from claiming one head twice;
 * the lease (`claimed_until`) returns a row to the pool if its claimer dies before recording the attempt.
 * Portable SQL: no advisory locks, no LISTEN/NOTIFY (DESIGN.md "Runtime shape").
 */
export async function claimDue(db: Db, options: ClaimOptions): Promise<Claim> {
  const first = await claimPass(db, options, options.after, undefined, options.limit);
  const heads = first.filter((r) => r.rank === 0).length;
  if (options.after === undefined || heads >= options.limit) {
    return { events: toEvents(first, options.claimToken), cursor: lastHead(first) };
  }
  // Wrap around: the resources up to the cursor, which the first pass did not look at.
  const second = await claimPass(db, options, undefined, options.after, options.limit - heads);
  return {
    events: toEvents([...first, ...second], options.claimToken),
    cursor: lastHead(second) ?? lastHead(first),
  };
}

async function claimPass(
  db: Db,
  options: ClaimOptions,
  after: OutboxKey | undefined,
  upTo: OutboxKey | undefined,
  limit: number,
): Promise<ClaimRow[]> {
  return (await claimStatement(options, after, upTo, limit).execute(db)).rows;
}

/** The claim of one pass, as a statement (exported for EXPLAIN in tools). */
export function claimStatement(
  options: ClaimOptions,
  after: OutboxKey | undefined,
  upTo: OutboxKey | undefined,
  limit: number,
): RawBuilder<ClaimRow> {
  const chain = Math.max(1, options.chain ?? 1);
  const claimable = (t: "k" | "o") => {
    const until = sql.ref(`${t}.claimed_until`);
    return sql`(${until} is null or ${until} < ${options.now})`;
  };
  return sql<ClaimRow>`
    with recursive k as (
      (select o.client_id, o.ordering_key, o.seq, o.claimed_until, 1 as pos from webhook_outbox o
        where (o.client_id, o.ordering_key) > (${after?.clientId ?? ""}, ${after?.orderingKey ?? ""})
        order by o.client_id, o.ordering_key, o.seq limit 1)
      union all
      select n.client_id, n.ordering_key, n.seq, n.claimed_until, k.pos + 1 from k cross join lateral (
        select o.client_id, o.ordering_key, o.seq, o.claimed_until from webhook_outbox o
        where (o.client_id, o.ordering_key) > (k.client_id, k.ordering_key)
        order by o.client_id, o.ordering_key, o.seq limit 1
      ) n
      where ${upTo === undefined ? sql`true` : sql`(n.client_id, n.ordering_key) <= (${upTo.clientId}, ${upTo.orderingKey})`}
    ), candidates as (
      select array(select k.seq from k where ${claimable("k")} limit ${limit}) as seqs
    ), heads as (
      select o.seq, o.client_id, o.ordering_key, array_position(c.seqs, o.seq) as pos
      from candidates c join webhook_outbox o on o.seq = any(c.seqs)
      where ${claimable("o")}
      for update of o skip locked
    ), due as (
      select f.seq, f.n - 1 as rank, h.pos from heads h
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
      c.webhook_url, c.webhook_secret_sealed, c.log_webhook_events, due.rank::int as rank, due.pos::int as pos
  `;
}

/** The key of the head claimed last in the pass's key order. */
function lastHead(rows: readonly ClaimRow[]): OutboxKey | undefined {
  let last: ClaimRow | undefined;
  for (const r of rows) if (r.rank === 0 && (last === undefined || r.pos > last.pos)) last = r;
  return last === undefined ? undefined : { clientId: last.client_id, orderingKey: last.ordering_key };
}

function toEvents(rows: readonly ClaimRow[], claimToken: string): ClaimedEvent[] {
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
      claimToken,
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
 * The rows of claims whose answers were lost (the claim may or may not have committed): back to the pool at once,
 * as releaseClaimed does. A scan of the outbox, which holds only undelivered events; run only after a failed claim.
 */
export async function releaseClaimTokens(db: Db, claimTokens: readonly string[]): Promise<void> {
  if (claimTokens.length === 0) return;
  await sql`
    update webhook_outbox set claimed_until = null, claim_token = null, claims = greatest(claims - 1, 0)
    where claim_token = any(${claimTokens}::text[])
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
