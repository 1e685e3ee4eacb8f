import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { sql } from "kysely";
import type { Clock } from "../platform/clock.js";
import type { Logger } from "../platform/logger.js";
import type { Db } from "../storage/database.js";
import type { EventLog } from "./event-log-repo.js";

/** How often a running dispatcher renews its heartbeat row. */
export const DEFAULT_HEARTBEAT_MS = 1000;
/** A dispatcher whose heartbeat is this many intervals old is taken for dead: its claims are taken over. */
export const STALE_HEARTBEATS = 5;
/** Heartbeat rows of dispatchers gone this long are deleted by the hourly prune. */
const DEAD_DISPATCHER_ROW_MS = 24 * 60 * 60 * 1000;
export const PRUNE_INTERVAL_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * A dispatcher's row in webhook_dispatchers: the owner of its claims, alive while its heartbeat is renewed. Real
 * time and the database's clock, not the injected one: liveness of a process, not a business date.
 */
export class Heartbeat {
  readonly id = randomUUID();
  readonly #db: Db;
  readonly #logger: Logger;
  readonly #intervalMs: number;
  #lastBeatAt = Number.NEGATIVE_INFINITY;
  #timer: NodeJS.Timeout | undefined;

  constructor(db: Db, logger: Logger, intervalMs: number) {
    this.#db = db;
    this.#logger = logger;
    this.#intervalMs = intervalMs;
  }

  /** A claim whose owner's heartbeat is older than this is taken over. */
  get staleMs(): number {
    return this.#intervalMs * STALE_HEARTBEATS;
  }

  start(): void {
    this.#timer = setInterval(() => void this.beat(), this.#intervalMs);
    this.#timer.unref();
  }

  /**
   * Before a claim: a dispatcher driven by runOnce (no timer) registers and renews its heartbeat here — committed
   * first, so no other dispatcher can see one of its claims without its heartbeat (ClaimOptions.owner).
   */
  async beatIfDue(): Promise<void> {
    if (performance.now() - this.#lastBeatAt >= this.#intervalMs) await this.beat();
  }

  /** Renews the heartbeat row (registering it the first time). */
  async beat(): Promise<void> {
    this.#lastBeatAt = performance.now();
    try {
      await sql`insert into webhook_dispatchers (id, heartbeat_at, started_at) values (${this.id}::uuid, now(), now())
        on conflict (id) do update set heartbeat_at = excluded.heartbeat_at`.execute(this.#db);
    } catch (e) {
      this.#logger.warn({ err: e }, "webhook dispatcher: heartbeat failed");
    }
  }

  /**
   * Nothing of ours is claimed any more: leaving the row would only make others wait for it to go stale. A later
   * claim (runOnce, or start again) registers anew.
   */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#lastBeatAt = Number.NEGATIVE_INFINITY;
    await sql`delete from webhook_dispatchers where id = ${this.id}::uuid`
      .execute(this.#db)
      .catch((e: unknown) => this.#logger.warn({ err: e }, "webhook dispatcher: removing its heartbeat row failed"));
  }
}

export interface RetentionOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly eventLog: EventLog;
  /** ROSTER_WEBHOOK_LOG_RETENTION_DAYS. */
  readonly retentionDays: number;
  /** The events feed's retention prune, run with the event log's (hourly, in bounded batches). */
  readonly pruneEvents?: () => Promise<number>;
}

/**
 * The hourly prune: the event log and the events feed past retention, the rows of long-dead dispatchers, and the
 * endpoints of deleted connections that owe no delivery.
 */
export class Retention {
  readonly #o: RetentionOptions;
  #lastPrune = 0;

  constructor(options: RetentionOptions) {
    this.#o = options;
  }

  /** Deletes event-log entries older than the retention period; returns how many. */
  async prune(): Promise<number> {
    const cutoff = new Date(this.#o.clock.now().getTime() - this.#o.retentionDays * DAY_MS);
    return this.#o.eventLog.pruneBefore(cutoff);
  }

  async maybePrune(): Promise<void> {
    const now = this.#o.clock.now().getTime();
    if (now - this.#lastPrune < PRUNE_INTERVAL_MS) return;
    this.#lastPrune = now;
    const pruned = await this.prune();
    if (pruned > 0) this.#o.logger.info({ pruned }, "webhook event log: pruned entries past retention");
    const events = (await this.#o.pruneEvents?.()) ?? 0;
    if (events > 0) this.#o.logger.info({ pruned: events }, "events feed: pruned events past retention");
    await sql`delete from webhook_dispatchers
      where heartbeat_at < now() - ${DEAD_DISPATCHER_ROW_MS}::bigint * interval '1 millisecond'`.execute(this.#o.db);
    // A deleted connection's endpoint owes nothing any more (its connection.deleted normally takes it): it goes.
    await sql`delete from retired_webhooks r where not exists (
      select 1 from webhook_outbox o where o.client_id = r.client_id and o.seq <= r.last_seq)`.execute(this.#o.db);
  }
}
