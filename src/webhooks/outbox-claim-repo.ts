import { type RawBuilder, type Selectable, sql } from "kysely";
import type { Db } from "../storage/database.js";
import type { WebhookOutboxTable } from "../storage/schema.js";

/**
 * A claimed outbox row with the client's delivery settings as they are now (for a deleted client, as they were when
 * it was deleted, and no event log).
 */
export interface ClaimedEvent {
  readonly seq: number;
  readonly id: string;
  readonly clientId: string;
  readonly organizationId: string;
  readonly event: string;
  readonly orderingKey: string;
  readonly body: string;
  /** The number of the attempt this claim makes (for the head) or will make (for an event queued behind it). */
  readonly attempt: number;
  /** Earlier attempts of this event that started and never finished (their dispatcher died). */
  readonly interrupted: number;
  readonly claimToken: string;
  readonly webhookUrl: string | null;
  readonly webhookSecretSealed: string | null;
  readonly logWebhookEvents: boolean;
  /** The client's `webhook.retry` now: whether a failed delivery is retried. */
  readonly webhookRetry: string;
  /** The W3C traceparent of the request that wrote the event (null: not traced); its delivery spans link to it. */
  readonly traceparent: string | null;
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
  /**
   * The claiming dispatcher's id. Its webhook_dispatchers row must be committed before its first claim: a claim
   * that another dispatcher re-checks under its lock (FOR UPDATE) is judged against that dispatcher's snapshot, and
   * a heartbeat row younger than it would make the owner look gone.
   */
  readonly owner: string;
  /** A claim whose owner's heartbeat is older than this is taken over. */
  readonly ownerStaleMs: number;
  /** Look at the resources after this key first, then wrap around to the first one (fair under overload). */
  readonly after?: OutboxKey | undefined;
  /** Organizations whose deliveries in flight are at their share: none of their events is claimed. */
  readonly excludeOrganizations?: readonly string[];
}

export interface ClaimRow
  extends Pick<
    Selectable<WebhookOutboxTable>,
    "seq" | "id" | "client_id" | "organization_id" | "event" | "ordering_key" | "body" | "attempts" | "interrupted"
  > {
  webhook_url: string | null;
  webhook_secret_sealed: string | null;
  log_webhook_events: boolean;
  webhook_retry: string;
  traceparent: string | null;
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
 * Portable SQL: no advisory locks, no LISTEN/NOTIFY (docs/decisions.md): it runs unchanged behind a pooler.
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
  // Free, lease run out, or held by a dispatcher that is gone or whose heartbeat is stale (a dead process). A claim
  // without an owner (written before owners were recorded) waits for its lease.
  const excluded = options.excludeOrganizations ?? [];
  const claimable = (t: "k" | "o") => {
    const organization = sql.ref(`${t}.organization_id`);
    // An organization at its share of the slots waits; the others' events flow (docs/webhooks.md).
    const share = excluded.length === 0 ? sql`true` : sql`${organization} <> all(${[...excluded]}::uuid[])`;
    const until = sql.ref(`${t}.claimed_until`);
    const owner = sql.ref(`${t}.claimed_by`);
    const retryAt = sql.ref(`${t}.next_attempt_at`);
    // A connection's `connection.deleted` is its last delivery: it waits for every earlier event of the connection.
    const last = sql`case when ${sql.ref(`${t}.event`)} = 'connection.deleted' then not exists (
        select 1 from webhook_outbox x where x.client_id = ${sql.ref(`${t}.client_id`)}
          and x.seq < ${sql.ref(`${t}.seq`)} and x.ordering_key <> ${sql.ref(`${t}.ordering_key`)}) else true end`;
    // A head waiting for its retry holds its resource back; other resources flow.
    return sql`${share} and ${last} and (${retryAt} is null or ${retryAt} <= ${options.now}) and (${until} is null or ${until} < ${options.now}
      or (${owner} <> ${options.owner}::uuid and not exists (
        select 1 from webhook_dispatchers d
        where d.id = ${owner} and d.heartbeat_at > now() - ${options.ownerStaleMs}::bigint * interval '1 millisecond')))`;
  };
  return sql<ClaimRow>`
    with recursive k as (
      (select o.client_id, o.ordering_key, o.seq, o.claimed_until, o.claimed_by, o.next_attempt_at, o.organization_id,
        o.event, 1 as pos
        from webhook_outbox o
        where (o.client_id, o.ordering_key) > (${after?.clientId ?? ""}, ${after?.orderingKey ?? ""})
        order by o.client_id, o.ordering_key, o.seq limit 1)
      union all
      select n.client_id, n.ordering_key, n.seq, n.claimed_until, n.claimed_by, n.next_attempt_at, n.organization_id,
        n.event, k.pos + 1
      from k cross join lateral (
        select o.client_id, o.ordering_key, o.seq, o.claimed_until, o.claimed_by, o.next_attempt_at, o.organization_id,
          o.event
        from webhook_outbox o
        where (o.client_id, o.ordering_key) > (k.client_id, k.ordering_key)
        order by o.client_id, o.ordering_key, o.seq limit 1
      ) n
      where ${upTo === undefined ? sql`true` : sql`(n.client_id, n.ordering_key) <= (${upTo.clientId}, ${upTo.orderingKey})`}
    ), candidates as (
      select array(select k.seq from k where ${claimable("k")} limit ${limit}) as seqs
    ), heads as (
      select o.seq, o.client_id, o.ordering_key, array_position(c.seqs, o.seq) as pos,
        o.attempt_started_at as unfinished_since
      from candidates c join webhook_outbox o on o.seq = any(c.seqs)
      where ${claimable("o")}
      for update of o skip locked
    ), due as (
      select f.seq, h.client_id, f.n - 1 as rank, h.pos,
        case when f.n = 1 then h.unfinished_since end as unfinished_since
      from heads h
      cross join lateral (
        select k.seq, row_number() over (order by k.seq) as n from (
          select o2.seq from webhook_outbox o2
          where o2.client_id = h.client_id and o2.ordering_key = h.ordering_key and o2.seq >= h.seq
          order by o2.seq
          limit ${chain}
        ) k
      ) f
    ), claimed as (
      -- The head's attempt starts now (it is sent at once); the events behind it start when each is marked.
      update webhook_outbox w
      set claimed_until = ${options.leaseUntil}::timestamptz
            + due.rank * ${options.leaseStepMs ?? 0}::bigint * interval '1 millisecond',
          claim_token = ${options.claimToken}, claimed_by = ${options.owner}::uuid,
          attempts = w.attempts + (due.rank = 0)::int,
          interrupted = w.interrupted + (due.unfinished_since is not null)::int,
          attempt_started_at = case when due.rank = 0 then ${options.now}::timestamptz else w.attempt_started_at end,
          next_attempt_at = case when due.rank = 0 then null else w.next_attempt_at end
      from due
      left join scim_clients c on c.client_id = due.client_id
      -- The endpoint a deleted connection had, for the rows it owes (0031-retired-webhooks); a client created again
      -- with the same id delivers its own, later, rows to its own endpoint. The event log went with the client.
      left join lateral (
        select r.webhook_url, r.webhook_secret_sealed, r.webhook_retry from retired_webhooks r
        where r.client_id = due.client_id and r.last_seq >= due.seq order by r.last_seq limit 1
      ) r on true
      where w.seq = due.seq and (r.webhook_url is not null or c.client_id is not null)
      returning w.seq, w.id, w.client_id, w.organization_id, w.event, w.ordering_key, w.body, w.attempts,
        w.interrupted, case when r.webhook_url is null then c.webhook_url else r.webhook_url end as webhook_url,
        case when r.webhook_url is null then c.webhook_secret_sealed else r.webhook_secret_sealed end
          as webhook_secret_sealed,
        r.webhook_url is null and c.log_webhook_events as log_webhook_events,
        case when r.webhook_url is null then c.webhook_retry else r.webhook_retry end as webhook_retry, w.traceparent,
        due.rank::int as rank,
        due.pos::int as pos, due.unfinished_since
    ), logged as (
      -- The attempt a dead dispatcher started and never finished goes to the event log, as it happened.
      insert into webhook_events (id, event_id, client_id, organization_id, event, payload, status_code, error,
        duration_ms, success, resend, attempted_at, attempt, state, next_attempt_time)
      select ${uuidv7Of(sql.ref("x.unfinished_since"))}, x.id, x.client_id, x.organization_id, x.event, x.body, null,
        ${INTERRUPTED_ERROR}, 0, false, false, x.unfinished_since, x.attempts - 1, 'retrying', ${options.now}::timestamptz
      from claimed x where x.unfinished_since is not null and x.log_webhook_events
    )
    select seq, id, client_id, organization_id, event, ordering_key, body, attempts, interrupted, webhook_url,
      webhook_secret_sealed, log_webhook_events, webhook_retry, traceparent, rank, pos
    from claimed
  `;
}

/** The event-log error of an attempt whose dispatcher stopped (crashed) before its answer was recorded. */
export const INTERRUPTED_ERROR = "interrupted: the dispatcher stopped before the answer was recorded";

/** A UUIDv7 (RFC 9562) for the time `at`: its 48-bit millisecond prefix over a random v4, version bits set to 7. */
function uuidv7Of(at: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
    placing substring(int8send(floor(extract(epoch from ${at}) * 1000)::bigint) from 3) from 1 for 6),
    52, 1), 53, 1), 'hex')::uuid`;
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
      // The head's attempt was counted by the claim; an event behind it is counted when it is marked started.
      attempt: r.rank === 0 ? r.attempts : r.attempts + 1,
      interrupted: r.interrupted,
      claimToken,
      webhookUrl: r.webhook_url,
      webhookSecretSealed: r.webhook_secret_sealed,
      logWebhookEvents: r.log_webhook_events,
      webhookRetry: r.webhook_retry,
      traceparent: r.traceparent,
    }))
    .sort((a, b) => a.seq - b.seq);
}

/** Claimed events (in seq order) grouped by resource, each group in seq order. */
export function chainsOf(events: readonly ClaimedEvent[]): ClaimedEvent[][] {
  const byKey = new Map<string, ClaimedEvent[]>();
  for (const e of events) {
    const key = `${e.clientId}\u0000${e.orderingKey}`;
    const chain = byKey.get(key);
    if (chain === undefined) byKey.set(key, [e]);
    else chain.push(e);
  }
  return [...byKey.values()];
}
