import type { Clock } from "../../platform/clock.js";
import type { Logger } from "../../platform/logger.js";
import { type ObservedRequest, requestLogEntry } from "./entry.js";
import { monotonicUuidv7Source } from "../ids.js";
import type { CountDelta, RequestLogRepo, RequestLogStore } from "./repo.js";

export const DEFAULT_BUFFER_CAPACITY = 10_000;
export const DEFAULT_BATCH_SIZE = 500;
export const DEFAULT_FLUSH_INTERVAL_MS = 1_000;
export const DEFAULT_RETENTION_DAYS = 7;
const PRUNE_INTERVAL_MS = 15 * 60_000;
/** Hourly count rows deleted per prune. */
const PRUNE_BATCH = 500;
const COUNTS_KEPT_MS = 48 * 3600_000;
const DROP_LOG_INTERVAL_MS = 60_000;
const HOUR_MS = 3600_000;
const STOP_WAIT_MS = 2_000;

export interface RequestLogWriterOptions {
  readonly store: RequestLogStore;
  /** For pruning; absent: no pruning (tests of the buffer alone). */
  readonly repo?: RequestLogRepo;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly onDrop: () => void;
  readonly capacity?: number;
  readonly batchSize?: number;
  readonly flushIntervalMs?: number;
  readonly retentionDays?: number;
}

/**
 * The request log's way to the database, off every request's path: a request's hook appends what it saw (by
 * reference) to a bounded array and returns; one batch at a time is turned into redacted entries and written by a
 * single multi-row INSERT (repo.ts), as soon as a batch is full, and what is left every second. A full
 * buffer drops the new entry (counted, logged at most once a minute): a slow or stalled database never slows or fails
 * a SCIM request. Counts of requests and errors per client and hour are summed in memory and added with each flush.
 */
export class RequestLogWriter {
  readonly #o: RequestLogWriterOptions;
  readonly #capacity: number;
  readonly #batchSize: number;
  /** The entries' ids: ordered as this writer made them. */
  readonly #ids = monotonicUuidv7Source();
  #buffer: ObservedRequest[] = [];
  #counts = new Map<string, { clientId: string; hour: number; requests: number; errors: number; last: number }>();
  #flushing: Promise<void> | undefined;
  /** Entries taken from the buffer so far, and how many of them a flush asked to be written even in a partial batch. */
  #taken = 0;
  #drainTo = 0;
  /** A flush asked for the counts to be written, even with no entry to go with them. */
  #countsDue = false;
  #timer: NodeJS.Timeout | undefined;
  #pruneTimer: NodeJS.Timeout | undefined;
  /** The partition upkeep in flight, if any: shutdown waits for it rather than closing the pool under it. */
  #pruning: Promise<void> | undefined;
  #dropped = 0;
  #lastDropLog = Number.NEGATIVE_INFINITY;

  constructor(options: RequestLogWriterOptions) {
    this.#o = options;
    this.#capacity = options.capacity ?? DEFAULT_BUFFER_CAPACITY;
    this.#batchSize = Math.min(options.batchSize ?? DEFAULT_BATCH_SIZE, this.#capacity);
  }

  /** Entries dropped since start (also the metric roster_request_log_dropped_total). */
  get dropped(): number {
    return this.#dropped;
  }

  get buffered(): number {
    return this.#buffer.length;
  }

  /** Appends a request (by reference), or drops it when the buffer is full; never waits. */
  enqueue(entry: ObservedRequest): boolean {
    if (this.#buffer.length >= this.#capacity) {
      this.#drop();
      return false;
    }
    this.#buffer.push(entry);
    if (this.#buffer.length >= this.#batchSize) void this.#run();
    return true;
  }

  /** Counts one request of a client for its health figures. */
  count(clientId: string, status: number, timeMs: number): void {
    const hour = timeMs - (timeMs % HOUR_MS);
    const key = `${hour}\u0000${clientId}`;
    const c = this.#counts.get(key);
    const error = status >= 400 ? 1 : 0;
    if (c === undefined) this.#counts.set(key, { clientId, hour, requests: 1, errors: error, last: timeMs });
    else {
      c.requests += 1;
      c.errors += error;
      if (timeMs > c.last) c.last = timeMs;
    }
  }

  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => void this.flush(), this.#o.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS);
    this.#timer.unref();
    if (this.#o.repo !== undefined) {
      // Today's and tomorrow's partitions before the first batch, and the expired ones gone, at start.
      this.#maintain();
      this.#pruneTimer = setInterval(() => this.#maintain(), PRUNE_INTERVAL_MS);
      this.#pruneTimer.unref();
    }
  }

  /** Stops the timers and writes what is buffered, waiting at most a couple of seconds for a stalled database. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    clearInterval(this.#pruneTimer);
    this.#timer = undefined;
    this.#pruneTimer = undefined;
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([this.flush(), this.#pruning]),
      new Promise<void>((resolve) => {
        timeout = setTimeout(resolve, STOP_WAIT_MS);
        timeout.unref();
      }),
    ]);
    clearTimeout(timeout);
  }

  /**
   * Writes every entry buffered at the time of the call, and the counts, after the batch in flight; resolves when
   * they are written (or failed: a failed batch is logged and lost, the request log is best-effort).
   */
  async flush(): Promise<void> {
    this.#drainTo = Math.max(this.#drainTo, this.#taken + this.#buffer.length);
    this.#countsDue = true;
    return this.#run();
  }

  /** One writer loop at a time; a call while it runs joins it (the loop rereads what it owes before each batch). */
  #run(): Promise<void> {
    this.#flushing ??= this.#writeBatches().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  /**
   * Writes full batches while the buffer holds one, and partial ones only up to what a flush asked for: under load
   * each INSERT carries a whole batch, instead of the few entries that arrived while the previous one was written
   * (a statement and a segment per couple of dozen entries cost PostgreSQL several times more per entry).
   */
  async #writeBatches(): Promise<void> {
    while (this.#buffer.length >= this.#batchSize || this.#taken < this.#drainTo || this.#countsDue) {
      const n = Math.min(this.#batchSize, this.#buffer.length);
      const batch = n === this.#buffer.length ? this.#buffer : this.#buffer.slice(0, n);
      this.#buffer = batch === this.#buffer ? [] : this.#buffer.slice(n);
      this.#taken += n;
      this.#countsDue = false;
      const counts = this.#takeCounts();
      try {
        // Redaction, serialisation and truncation happen here, a batch at a time, not on any request's path.
        await this.#o.store.insert(batch.map((r) => requestLogEntry(r, this.#ids)));
        await this.#o.store.addCounts(counts);
      } catch (e) {
        this.#o.logger.warn({ err: e, entries: batch.length }, "could not write a batch of the SCIM request log");
        this.#drainTo = this.#taken;
        return;
      }
    }
  }

  #maintain(): void {
    this.#pruning ??= this.prune()
      .then(
        () => {},
        (e: unknown) => {
          // Reported a moment later: Ctrl-C reaches an embedded PostgreSQL in the same instant as Roster, whose
          // shutdown then demotes the line (a demotable logger, server.ts); a real failure is reported all the same.
          const report = () =>
            this.#o.logger.warn({ err: e }, "could not drop or create the SCIM request log's partitions");
          setTimeout(report, 100).unref();
        },
      )
      .finally(() => {
        this.#pruning = undefined;
      });
  }

  #takeCounts(): CountDelta[] {
    if (this.#counts.size === 0) return [];
    const out: CountDelta[] = [];
    for (const c of this.#counts.values()) {
      out.push({
        clientId: c.clientId,
        hour: new Date(c.hour),
        requests: c.requests,
        errors: c.errors,
        lastRequestTime: new Date(c.last),
      });
    }
    this.#counts = new Map();
    return out;
  }

  #drop(): void {
    this.#dropped += 1;
    this.#o.onDrop();
    const now = this.#o.clock.now().getTime();
    if (now - this.#lastDropLog >= DROP_LOG_INTERVAL_MS) {
      this.#lastDropLog = now;
      this.#o.logger.warn(
        { dropped: this.#dropped, capacity: this.#capacity },
        "SCIM request log buffer full: entries are being dropped (the database is slow or unreachable)",
      );
    }
  }

  /**
   * Drops the daily partitions whose whole day is past the retention (an entry is kept for the retention and at
   * most one day more), creates today's and tomorrow's ahead, and deletes old hourly counts (one bounded batch).
   */
  async prune(): Promise<{ partitions: number; counts: number }> {
    const repo = this.#o.repo;
    if (repo === undefined) return { partitions: 0, counts: 0 };
    const now = this.#o.clock.now().getTime();
    const retentionMs = (this.#o.retentionDays ?? DEFAULT_RETENTION_DAYS) * 24 * HOUR_MS;
    const { dropped } = await repo.maintainPartitions(now, now - retentionMs);
    const counts = await repo.pruneCounts(new Date(now - COUNTS_KEPT_MS), PRUNE_BATCH);
    return { partitions: dropped, counts };
  }
}
