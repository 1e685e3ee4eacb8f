import { randomBytes, randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { Clock } from "../platform/clock.js";
import { attemptId } from "./attempt-id.js";
import type { Logger } from "../platform/logger.js";
import type { Db } from "../storage/database.js";
import { type AttemptRecord, type EventLog, outcomeOf } from "./event-log.js";
import { sql } from "kysely";
import {
  type ClaimedEvent,
  claimDue,
  type Finished,
  type OutboxKey,
  recordAndStart,
  releaseClaimed,
  releaseClaimTokens,
} from "./outbox-repo.js";
import type { DeliveryResult, WebhookSender } from "./sender.js";

export const DEFAULT_CONCURRENCY = 64;
/** Events of one resource claimed together and sent back to back (the head of its key and those after it). */
export const DEFAULT_CHAIN = 32;
export const DEFAULT_POLL_INTERVAL_MS = 1000;
/**
 * After a claim that did not fill every free slot, the next one waits this long (wake-ups in between are gathered):
 * under a stream of single writes, one claim and one record commit then serve every event of the interval instead
 * of one each — the dispatcher's share of the CPU, which a write with a webhook pays in latency, shrinks with it.
 */
export const DEFAULT_CLAIM_INTERVAL_MS = 10;
/** A lease outlives the request timeout by this much before another dispatcher may take the event over. */
export const LEASE_MARGIN_MS = 30_000;
/**
 * An event whose own attempts were interrupted this many times (each a crash of the dispatcher sending it) is given
 * up, so a poisonous event cannot crash-loop every instance; crashes while other events were sent never count.
 */
export const MAX_INTERRUPTED = 10;
/**
 * With `webhook.retry = "backoff"`: the waits before the 2nd … 8th attempt of a failed delivery (Svix's schedule:
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), each ±10 % so that retries of a burst spread out.
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];
const RETRY_JITTER = 0.1;
/** How often a running dispatcher renews its heartbeat row. */
export const DEFAULT_HEARTBEAT_MS = 1000;
/** A dispatcher whose heartbeat is this many intervals old is taken for dead: its claims are taken over. */
export const STALE_HEARTBEATS = 5;
/** Heartbeat rows of dispatchers gone this long are deleted by the hourly prune. */
const DEAD_DISPATCHER_ROW_MS = 24 * 60 * 60 * 1000;
export const PRUNE_INTERVAL_MS = 60 * 60 * 1000;
/** Opened webhook secrets kept in memory (by sealed value, so a rotated secret is a new entry); then cleared. */
const MAX_OPENED_SECRETS = 256;
/** Failed claims remembered for release (one a poll interval in an outage); beyond this their owner's lease applies. */
const MAX_UNANSWERED_CLAIMS = 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface DispatcherOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly sender: WebhookSender;
  readonly eventLog: EventLog;
  /** The events feed's retention prune, run with the event log's (hourly, in bounded batches). */
  readonly pruneEvents?: () => Promise<number>;
  /** Decrypts a sealed webhook secret (SecretBox); only to sign. */
  readonly openSecret: (sealed: string) => string;
  /** ROSTER_WEBHOOK_TIMEOUT_MS; the claim lease is this plus LEASE_MARGIN_MS. */
  readonly timeoutMs: number;
  /** ROSTER_WEBHOOK_LOG_RETENTION_DAYS. */
  readonly retentionDays: number;
  /** Deliveries in flight at once, across resources (one per resource at a time). */
  readonly concurrency?: number;
  /** Up to this many pending events of one resource are claimed at once and sent one after the other. */
  readonly chain?: number;
  /** How often an idle dispatcher looks for events committed by other instances. */
  readonly pollIntervalMs?: number;
  /** Least time between two claims of the running loop unless the last one filled every free slot (0: none). */
  readonly claimIntervalMs?: number;
  /** ROSTER_WEBHOOK_HEARTBEAT_MS: heartbeat interval; a dispatcher silent for 5 intervals is taken for dead. */
  readonly heartbeatMs?: number;
}

/** One entry of the group commit: an answered event to record, and/or the next event of its chain to mark started. */
interface Bookkeeping {
  readonly finished: Finished | undefined;
  readonly start: ClaimedEvent | undefined;
  readonly resolve: (started: boolean) => void;
}

/**
 * Delivers outbox events (docs/webhooks.md): claims due rows (FOR UPDATE SKIP LOCKED), one per resource at a
 * time and in commit order, sends up to `concurrency` at once, records each attempt, and retries a failure only
 * when the connection opted in (`webhook.retry = "backoff"`, RETRY_SCHEDULE_MS; the retry time lives in the outbox).
 *
 * Crash safety: every attempt is marked started in PostgreSQL before it is sent (the claim marks the head; each later
 * event of a chain is marked in the same statement that records the one before it), so at most one attempt per
 * resource is ever unfinished. Each dispatcher keeps a heartbeat row; when it dies, its claims are taken over as soon
 * as its heartbeat is `STALE_HEARTBEATS` intervals old (or at once when its row is gone), the unfinished attempt is
 * written to the event log as interrupted, and the event is sent again with the same `webhook-id` (at-least-once).
 * A live dispatcher that stops answering loses its claims when their lease (`timeoutMs + LEASE_MARGIN_MS`) runs out.
 *
 * `start()` runs a loop woken by `wake()` (after local commits) and by a poll interval (commits of other
 * instances); `runOnce()` and `drain()` run it by hand for tests and tools, no sleeping involved.
 */
export class WebhookDispatcher {
  readonly #o: DispatcherOptions;
  readonly #concurrency: number;
  readonly #chain: number;
  readonly #pollMs: number;
  readonly #claimIntervalMs: number;
  readonly #heartbeatMs: number;
  /** This dispatcher's row in webhook_dispatchers: the owner of its claims. */
  readonly #id = randomUUID();
  #lastBeatAt = Number.NEGATIVE_INFINITY;
  #heartbeat: NodeJS.Timeout | undefined;
  #lastClaimAt = Number.NEGATIVE_INFINITY;
  /** Where the next claim looks first: resources are served round robin in key order. */
  #cursor: OutboxKey | undefined;
  /** Tokens of claims that failed: each may have committed with its answer lost (released by #releaseUnanswered). */
  #unanswered: string[] = [];
  readonly #inFlight = new Set<Promise<void>>();
  #bookkeeping: Bookkeeping[] = [];
  #flushing: Promise<void> | undefined;
  #loop: Promise<void> | undefined;
  #stopping = false;
  #wakeRequested = false;
  #wakeUp: (() => void) | undefined;
  #lastPrune = 0;
  #pruning: Promise<void> | undefined;
  /** Sealed secret → secret: opening one (AES-GCM) per event was a fifth of the dispatcher's CPU per event. */
  readonly #opened = new Map<string, string>();

  constructor(options: DispatcherOptions) {
    this.#o = options;
    this.#concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    this.#chain = options.chain ?? DEFAULT_CHAIN;
    this.#pollMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.#claimIntervalMs = options.claimIntervalMs ?? DEFAULT_CLAIM_INTERVAL_MS;
    this.#heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  }

  /** The id its claims carry (webhook_dispatchers.id). */
  get id(): string {
    return this.#id;
  }

  get running(): boolean {
    return this.#loop !== undefined && !this.#stopping;
  }

  start(): void {
    if (this.#loop !== undefined) return;
    this.#stopping = false;
    this.#heartbeat = setInterval(() => void this.#beat(), this.#heartbeatMs);
    this.#heartbeat.unref();
    this.#loop = this.#run();
  }

  /** Something may be due now (a local commit, a finished delivery). Cheap; a no-op when not started. */
  wake(): void {
    this.#wakeRequested = true;
    this.#wakeUp?.();
  }

  /** Graceful: stop claiming, let in-flight deliveries finish and their attempts be recorded. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.wake();
    await this.#loop;
    await Promise.all(this.#inFlight);
    await this.#flushing;
    await this.#pruning;
    this.#loop = undefined;
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
    // Nothing of ours is claimed any more: leaving the row would only make others wait for it to go stale. A later
    // claim (runOnce, or start again) registers anew.
    this.#lastBeatAt = Number.NEGATIVE_INFINITY;
    await sql`delete from webhook_dispatchers where id = ${this.#id}::uuid`
      .execute(this.#o.db)
      .catch((e: unknown) => this.#o.logger.warn({ err: e }, "webhook dispatcher: removing its heartbeat row failed"));
  }

  /**
   * Claims one batch (up to `concurrency` resources, up to `chain` events each), delivers it and records the
   * attempts; returns how many events it claimed.
   */
  async runOnce(): Promise<number> {
    const claimed = await this.#claim(this.#concurrency);
    await Promise.all(chainsOf(claimed).map((c) => this.#deliverChain(c)));
    return claimed.length;
  }

  /** runOnce until nothing is claimable (events leased by another dispatcher are left to it). */
  async drain(): Promise<number> {
    let total = 0;
    for (let n = await this.runOnce(); n > 0; n = await this.runOnce()) total += n;
    return total;
  }

  /** Deletes event-log entries older than the retention period; returns how many. */
  async prune(): Promise<number> {
    const cutoff = new Date(this.#o.clock.now().getTime() - this.#o.retentionDays * DAY_MS);
    return this.#o.eventLog.pruneBefore(cutoff);
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      try {
        // Retention runs beside the claims: a large prune must not hold deliveries back.
        this.#pruning ??= this.#maybePrune()
          .catch((e: unknown) => this.#o.logger.error({ err: e }, "webhook dispatcher: pruning failed"))
          .finally(() => {
            this.#pruning = undefined;
          });
        const free = this.#concurrency - this.#inFlight.size;
        // Claims are commits: wait for a quarter of the slots to free up rather than claim one row at a time.
        if (free > 0 && (free >= this.#concurrency / 4 || this.#inFlight.size === 0)) {
          this.#lastClaimAt = performance.now();
          const chains = chainsOf(await this.#claim(free));
          for (const chain of chains) this.#track(this.#deliverChain(chain));
          if (chains.length === free) continue;
        }
      } catch (e) {
        this.#o.logger.error({ err: e }, "webhook dispatcher: claiming failed; retrying after the poll interval");
        // Not at the next wake: every write wakes the dispatcher, and in an outage each claim would fail (and log).
        await new Promise<void>((resolve) => setTimeout(resolve, this.#pollMs).unref());
        continue;
      }
      await this.#idle();
      await this.#pace();
    }
  }

  #track(delivery: Promise<void>): void {
    this.#inFlight.add(delivery);
    void delivery.finally(() => {
      this.#inFlight.delete(delivery);
      this.wake();
    });
  }

  /** Real time, not the injected clock: a rate limit of this process, not a business date. */
  async #pace(): Promise<void> {
    const wait = this.#lastClaimAt + this.#claimIntervalMs - performance.now();
    if (wait <= 0 || this.#stopping) return;
    await new Promise<void>((resolve) => setTimeout(resolve, wait).unref());
  }

  async #idle(): Promise<void> {
    if (this.#wakeRequested || this.#stopping) {
      this.#wakeRequested = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, this.#pollMs);
      timer.unref();
      const self = this;
      function done() {
        clearTimeout(timer);
        self.#wakeUp = undefined;
        resolve();
      }
      this.#wakeUp = done;
    });
    this.#wakeRequested = false;
  }

  async #maybePrune(): Promise<void> {
    const now = this.#o.clock.now().getTime();
    if (now - this.#lastPrune < PRUNE_INTERVAL_MS) return;
    this.#lastPrune = now;
    const pruned = await this.prune();
    if (pruned > 0) this.#o.logger.info({ pruned }, "webhook event log: pruned entries past retention");
    const events = (await this.#o.pruneEvents?.()) ?? 0;
    if (events > 0) this.#o.logger.info({ pruned: events }, "events feed: pruned events past retention");
    await sql`delete from webhook_dispatchers
      where heartbeat_at < now() - ${DEAD_DISPATCHER_ROW_MS}::bigint * interval '1 millisecond'`.execute(this.#o.db);
  }

  /** Renews the heartbeat row (registering it the first time); real time, the database's clock. */
  async #beat(): Promise<void> {
    this.#lastBeatAt = performance.now();
    try {
      await sql`insert into webhook_dispatchers (id, heartbeat_at, started_at) values (${this.#id}::uuid, now(), now())
        on conflict (id) do update set heartbeat_at = excluded.heartbeat_at`.execute(this.#o.db);
    } catch (e) {
      this.#o.logger.warn({ err: e }, "webhook dispatcher: heartbeat failed");
    }
  }

  async #claim(limit: number): Promise<ClaimedEvent[]> {
    const now = this.#o.clock.now();
    // A dispatcher driven by runOnce (no timer) registers and renews its heartbeat before it claims — committed
    // first, so no other dispatcher can see one of its claims without its heartbeat (ClaimOptions.owner).
    if (performance.now() - this.#lastBeatAt >= this.#heartbeatMs) await this.#beat();
    await this.#releaseUnanswered();
    const claimToken = randomBytes(12).toString("base64url");
    const claim = await claimDue(this.#o.db, {
      owner: this.#id,
      ownerStaleMs: this.#heartbeatMs * STALE_HEARTBEATS,
      limit,
      now,
      leaseUntil: new Date(now.getTime() + this.#o.timeoutMs + LEASE_MARGIN_MS),
      chain: this.#chain,
      leaseStepMs: this.#o.timeoutMs,
      claimToken,
      after: this.#cursor,
    }).catch((e: unknown) => {
      if (this.#unanswered.length < MAX_UNANSWERED_CLAIMS) this.#unanswered.push(claimToken);
      throw e;
    });
    this.#cursor = claim.cursor ?? this.#cursor;
    return claim.events;
  }

  /**
   * A connection cut after a claim committed (a terminated backend, a reset) loses the claimed events' only copy in
   * this process, and their owner — this live dispatcher — keeps its lease: without this they would wait it out.
   * Released before the next claim; while the database is still away this fails like the claim would, and is tried
   * again.
   */
  async #releaseUnanswered(): Promise<void> {
    if (this.#unanswered.length === 0) return;
    await releaseClaimTokens(this.#o.db, this.#unanswered);
    this.#unanswered = [];
  }

  /**
   * One resource's claimed events, in order: each is sent once the one before it was answered and recorded — the
   * statement that records it also marks the next one started (group commit across chains). On shutdown, or when
   * another dispatcher took the resource over, the events not yet started are released.
   */
  async #deliverChain(events: readonly ClaimedEvent[]): Promise<void> {
    let finished: Finished | undefined;
    for (const [i, event] of events.entries()) {
      if (i > 0) {
        const next = this.#stopping ? undefined : event;
        const started = await this.#book(finished, next);
        finished = undefined;
        if (!started) {
          await releaseClaimed(this.#o.db, events.slice(i)).catch((e: unknown) => {
            this.#o.logger.error({ err: e }, "webhook dispatcher: releasing claimed events failed (lease applies)");
          });
          return;
        }
      }
      finished = await this.#deliver(event);
      if (finished.retryAt !== undefined) {
        // The head waits for its retry: the events behind it go back unsent, in order.
        await this.#book(finished, undefined);
        await releaseClaimed(this.#o.db, events.slice(i + 1)).catch((e: unknown) => {
          this.#o.logger.error({ err: e }, "webhook dispatcher: releasing claimed events failed (lease applies)");
        });
        return;
      }
    }
    if (finished !== undefined) await this.#book(finished, undefined);
  }

  /** Sends one event (its attempt already marked started) and returns its outcome, to record. */
  async #deliver(event: ClaimedEvent): Promise<Finished> {
    const attemptedAt = this.#o.clock.now();
    const result = await this.#attempt(event, attemptedAt.getTime());
    const wait = result.success || result.skipped === true ? undefined : this.#retryWait(event);
    const retryAt = wait === undefined ? undefined : new Date(attemptedAt.getTime() + wait);
    if (!result.success) {
      this.#o.logger.warn(
        { clientId: event.clientId, eventId: event.id, status: result.statusCode, error: result.error, retryAt },
        retryAt === undefined ? "webhook delivery failed (not retried)" : "webhook delivery failed (retried later)",
      );
    }
    const attempt: AttemptRecord | null = event.logWebhookEvents
      ? {
          id: attemptId(attemptedAt.getTime()),
          event_id: event.id,
          client_id: event.clientId,
          organization_id: event.organizationId,
          event: event.event,
          payload: event.body,
          ...outcomeOf(result),
          resend: false,
          attempted_at: attemptedAt,
          attempt: event.attempt,
          state: result.success ? "delivered" : retryAt === undefined ? "failed" : "retrying",
          next_attempt_time: retryAt ?? null,
        }
      : null;
    return { event, attempt, retryAt };
  }

  /** The wait before the next attempt of a failed delivery; undefined when it is not retried. */
  #retryWait(event: ClaimedEvent): number | undefined {
    if (event.webhookRetry !== "backoff") return undefined;
    const base = RETRY_SCHEDULE_MS[event.attempt - 1];
    if (base === undefined) return undefined;
    return Math.round(base * (1 + RETRY_JITTER * (2 * Math.random() - 1)));
  }

  async #attempt(event: ClaimedEvent, timestampMs: number): Promise<DeliveryResult & { skipped?: true }> {
    // Not sent at all: retrying would not help (configuration, or given up).
    const skipped = (error: string): DeliveryResult & { skipped: true } => ({
      success: false,
      statusCode: null,
      error,
      durationMs: 0,
      skipped: true,
    });
    if (event.interrupted >= MAX_INTERRUPTED) {
      return skipped(`given up: delivery interrupted ${event.interrupted} times`);
    }
    if (event.webhookUrl === null) return skipped("no webhook URL configured");
    if (event.webhookSecretSealed === null) return skipped("no webhook secret configured; not sent unsigned");
    let secret = this.#opened.get(event.webhookSecretSealed);
    if (secret === undefined) {
      try {
        secret = this.#o.openSecret(event.webhookSecretSealed);
      } catch {
        return skipped("webhook secret cannot be decrypted with ROSTER_SECRETS");
      }
      if (this.#opened.size >= MAX_OPENED_SECRETS) this.#opened.clear();
      this.#opened.set(event.webhookSecretSealed, secret);
    }
    return this.#o.sender.send({ url: event.webhookUrl, body: event.body, secret, webhookId: event.id, timestampMs });
  }

  /** Queues bookkeeping for the group commit; resolves once written, with whether `start` was marked started. */
  #book(finished: Finished | undefined, start: ClaimedEvent | undefined): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      this.#bookkeeping.push({ finished, start, resolve });
      this.#flushing ??= this.#flush();
    });
  }

  /** Group commit: bookkeeping queued while a write is under way is written together by the next one. */
  async #flush(): Promise<void> {
    while (this.#bookkeeping.length > 0) {
      const batch = this.#bookkeeping;
      this.#bookkeeping = [];
      let started = new Set<number>();
      try {
        started = await recordAndStart(
          this.#o.db,
          batch.flatMap((b) => (b.finished === undefined ? [] : [b.finished])),
          batch.flatMap((b) => (b.start === undefined ? [] : [b.start])),
          this.#o.clock.now(),
        );
      } catch (e) {
        // The answered events stay claimed and are sent again after a takeover: the at-least-once edge.
        this.#o.logger.error({ err: e, events: batch.length }, "webhook dispatcher: recording attempts failed");
      }
      for (const b of batch) b.resolve(b.start !== undefined && started.has(b.start.seq));
    }
    this.#flushing = undefined;
  }
}

/** Claimed events (in seq order) grouped by resource, each group in seq order. */
function chainsOf(events: readonly ClaimedEvent[]): ClaimedEvent[][] {
  const byKey = new Map<string, ClaimedEvent[]>();
  for (const e of events) {
    const key = `${e.clientId}\u0000${e.orderingKey}`;
    const chain = byKey.get(key);
    if (chain === undefined) byKey.set(key, [e]);
    else chain.push(e);
  }
  return [...byKey.values()];
}
