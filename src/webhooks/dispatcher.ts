import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { Clock } from "../platform/clock.js";
import { attemptId } from "./attempt-id.js";
import type { Logger } from "../platform/logger.js";
import type { Db } from "../storage/database.js";
import type { AttemptRecord, EventLog } from "./event-log.js";
import {
  type ClaimedEvent,
  claimDue,
  completeClaimed,
  type OutboxKey,
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
/** An event whose deliveries were interrupted this many times (crash loops) is given up, not sent again. */
export const MAX_CLAIMS = 3;
export const PRUNE_INTERVAL_MS = 60 * 60 * 1000;
/** Failed claims remembered for release (one a poll interval in an outage); beyond this the lease recovers them. */
const MAX_UNANSWERED_CLAIMS = 1000;
/** Opened webhook secrets kept in memory (by sealed value, so a rotated secret is a new entry); then cleared. */
const MAX_OPENED_SECRETS = 256;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface DispatcherOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly sender: WebhookSender;
  readonly eventLog: EventLog;
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
}

interface Completion {
  readonly event: ClaimedEvent;
  readonly attempt: AttemptRecord | null;
  readonly resolve: () => void;
}

/**
 * Delivers outbox events (DESIGN.md "Webhooks"): claims due rows (FOR UPDATE SKIP LOCKED), one per resource at a
 * time and in commit order, sends up to `concurrency` at once, records each attempt, and never retries a failure.
 *
 * At-least-once edge: if this process dies after claiming an event and before recording its attempt, the event is
 * sent again by any dispatcher once the lease (`timeoutMs + LEASE_MARGIN_MS`) expires — with the same `webhook-id`,
 * so receivers can drop the duplicate.
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
  #lastClaimAt = Number.NEGATIVE_INFINITY;
  /** Where the next claim looks first: resources are served round robin in key order. */
  #cursor: OutboxKey | undefined;
  /** Tokens of claims that failed: each may have committed with its answer lost (released by #releaseUnanswered). */
  #unanswered: string[] = [];
  readonly #inFlight = new Set<Promise<void>>();
  #completions: Completion[] = [];
  #flushing: Promise<void> | undefined;
  #loop: Promise<void> | undefined;
  #stopping = false;
  #wakeRequested = false;
  #wakeUp: (() => void) | undefined;
  #lastPrune = 0;
  /** Sealed secret → secret: opening one (AES-GCM) per event was a fifth of the dispatcher's CPU per event. */
  readonly #opened = new Map<string, string>();

  constructor(options: DispatcherOptions) {
    this.#o = options;
    this.#concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    this.#chain = options.chain ?? DEFAULT_CHAIN;
    this.#pollMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.#claimIntervalMs = options.claimIntervalMs ?? DEFAULT_CLAIM_INTERVAL_MS;
  }

  get running(): boolean {
    return this.#loop !== undefined && !this.#stopping;
  }

  start(): void {
    if (this.#loop !== undefined) return;
    this.#stopping = false;
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
    this.#loop = undefined;
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
        await this.#maybePrune();
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
  }

  async #claim(limit: number): Promise<ClaimedEvent[]> {
    const now = this.#o.clock.now();
    await this.#releaseUnanswered();
    const claimToken = randomBytes(12).toString("base64url");
    const claim = await claimDue(this.#o.db, {
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
   * this process: without this they would wait out their lease. Released before the next claim; while the database
   * is still away this fails like the claim would, and is tried again.
   */
  async #releaseUnanswered(): Promise<void> {
    if (this.#unanswered.length === 0) return;
    await releaseClaimTokens(this.#o.db, this.#unanswered);
    this.#unanswered = [];
  }

  /**
   * One resource's claimed events, in order: each is sent once the one before it was answered; their attempts are
   * recorded by the group commit meanwhile. On shutdown the events not yet sent are released at once.
   */
  async #deliverChain(events: readonly ClaimedEvent[]): Promise<void> {
    const recorded: Promise<void>[] = [];
    for (const [i, event] of events.entries()) {
      if (this.#stopping && i > 0) {
        await releaseClaimed(this.#o.db, events.slice(i)).catch((e: unknown) => {
          this.#o.logger.error({ err: e }, "webhook dispatcher: releasing claimed events failed (lease applies)");
        });
        break;
      }
      recorded.push((await this.#deliver(event)).recorded);
    }
    await Promise.all(recorded);
  }

  /** Sends one event; resolves once it is answered, with a promise that resolves once its attempt is recorded. */
  async #deliver(event: ClaimedEvent): Promise<{ recorded: Promise<void> }> {
    const attemptedAt = this.#o.clock.now();
    const result = await this.#attempt(event, attemptedAt.getTime());
    if (!result.success) {
      this.#o.logger.warn(
        { clientId: event.clientId, eventId: event.id, status: result.statusCode, error: result.error },
        "webhook delivery failed (not retried)",
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
          status_code: result.statusCode,
          error: result.error,
          duration_ms: result.durationMs,
          success: result.success,
          resend: false,
          attempted_at: attemptedAt,
        }
      : null;
    const recorded = new Promise<void>((resolve) => {
      this.#completions.push({ event, attempt, resolve });
    });
    this.#flushing ??= this.#flush();
    return { recorded };
  }

  async #attempt(event: ClaimedEvent, timestampMs: number): Promise<DeliveryResult> {
    const skipped = (error: string): DeliveryResult => ({ success: false, statusCode: null, error, durationMs: 0 });
    if (event.claims > MAX_CLAIMS) return skipped(`given up: delivery interrupted ${MAX_CLAIMS} times`);
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

  /** Group commit: attempts finished while a write is under way are recorded together by the next one. */
  async #flush(): Promise<void> {
    while (this.#completions.length > 0) {
      const batch = this.#completions;
      this.#completions = [];
      try {
        await completeClaimed(this.#o.db, batch);
      } catch (e) {
        // The rows stay claimed and are re-sent after their lease: the at-least-once edge.
        this.#o.logger.error({ err: e, events: batch.length }, "webhook dispatcher: recording attempts failed");
      }
      for (const c of batch) c.resolve();
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
