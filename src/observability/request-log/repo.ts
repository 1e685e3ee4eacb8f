import { sql } from "kysely";
import type { Db } from "../../storage/database.js";
import { preparedStatement } from "../../storage/prepared.js";
import {
  createPartitions,
  DAY_MS,
  dayOfId,
  dropPartitionsBefore,
  insertRows,
  type RequestLogEntry,
  type RequestLogSummary,
} from "../../storage/request-log-partitions.js";

export { type RequestLogEntry, type RequestLogSummary, uuidv7Floor } from "../../storage/request-log-partitions.js";

/** Requests and errors of one client in one hour, added to what other batches and instances already counted. */
export interface CountDelta {
  readonly clientId: string;
  readonly hour: Date;
  readonly requests: number;
  readonly errors: number;
  readonly lastRequestTime: Date;
}

export interface RequestLogFilter {
  /** Inclusive status range: `4xx` → 400..499, `404` → 404..404. */
  readonly status?: { readonly min: number; readonly max: number };
  readonly method?: string;
  readonly resourceId?: string;
}

export interface ConnectionHealth {
  readonly lastRequestTime: Date | null;
  readonly requests: number;
  readonly errors: number;
}

/** Where the background writer puts its batches; an interface so that a test can stall it. */
export interface RequestLogStore {
  insert(entries: readonly RequestLogEntry[]): Promise<void>;
  addCounts(deltas: readonly CountDelta[]): Promise<void>;
}

/**
 * The request log as plain rows, one per request, in daily partitions (storage/request-log-partitions.ts): a batch is
 * one multi-row INSERT, a page is a backward scan of the primary key `(client_id, id)` (of the newest partitions
 * first), a resource's entries come from the partial index `(client_id, resource_id, id)`, and retention drops the
 * partitions of expired days.
 */
export class RequestLogRepo implements RequestLogStore {
  readonly #db: Db;
  /** Days whose partition this instance created or found: a batch of a known day goes straight to its INSERT. */
  readonly #days = new Set<number>();
  constructor(db: Db) {
    this.#db = db;
  }

  /**
   * One statement per batch (storage/request-log-partitions.ts insertRows). A batch of a day without a partition
   * yet (the first after midnight, a test clock) creates it first.
   */
  async insert(entries: readonly RequestLogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const days = new Set(entries.map((e) => dayOfId(e.id)));
    const missing = [...days].filter((d) => !this.#days.has(d));
    if (missing.length > 0) await this.createPartitions(missing);
    try {
      await this.#insertRows(entries);
    } catch (e) {
      // 23514: no partition for a row: another instance dropped one this instance still knew.
      if ((e as { code?: unknown }).code !== "23514") throw e;
      this.#days.clear();
      await this.createPartitions(days);
      await this.#insertRows(entries);
    }
  }

  /** Creates (if need be) the partitions of these days. */
  async createPartitions(days: Iterable<number>): Promise<void> {
    const list = [...days];
    await createPartitions(this.#db, list);
    for (const d of list) this.#days.add(d);
  }

  #insertRows(entries: readonly RequestLogEntry[]): Promise<void> {
    return insertRows(this.#db, entries, INSERT_ROWS);
  }

  async addCounts(deltas: readonly CountDelta[]): Promise<void> {
    if (deltas.length === 0) return;
    await this.#db
      .insertInto("scim_request_counts")
      .values(
        deltas.map((d) => ({
          client_id: d.clientId,
          hour: d.hour,
          requests: d.requests,
          errors: d.errors,
          last_request_time: d.lastRequestTime,
        })),
      )
      .onConflict((oc) =>
        oc.columns(["client_id", "hour"]).doUpdateSet({
          requests: sql`scim_request_counts.requests + excluded.requests`,
          errors: sql`scim_request_counts.errors + excluded.errors`,
          last_request_time: sql`greatest(scim_request_counts.last_request_time, excluded.last_request_time)`,
        }),
      )
      .execute();
  }

  /** Up to `limit` entries older than `before`, newest first: a backward scan of the primary key or, for a resource, of its index. */
  async list(
    clientId: string,
    filter: RequestLogFilter,
    before: string | undefined,
    limit: number,
  ): Promise<RequestLogSummary[]> {
    let q = this.#db
      .selectFrom("scim_request_log")
      .select(SUMMARY_COLUMNS)
      .where("client_id", "=", clientId)
      .orderBy("id", "desc")
      .limit(limit);
    if (before !== undefined) q = q.where("id", "<", before);
    if (filter.status !== undefined) {
      q = q.where("status", ">=", filter.status.min).where("status", "<=", filter.status.max);
    }
    if (filter.method !== undefined) q = q.where("method", "=", filter.method);
    if (filter.resourceId !== undefined) q = q.where("resource_id", "=", filter.resourceId);
    return await q.execute();
  }

  /** One entry with its bodies, by the primary key (in the partition of its id's day). */
  async get(clientId: string, id: string): Promise<RequestLogEntry | undefined> {
    return await this.#db
      .selectFrom("scim_request_log")
      .select([...SUMMARY_COLUMNS, "request_body", "response_body"])
      .where("client_id", "=", clientId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  /** At most 25 hourly rows of the primary key. */
  async health(clientId: string, since: Date): Promise<ConnectionHealth> {
    const row = await this.#db
      .selectFrom("scim_request_counts")
      .select((eb) => [
        eb.fn.sum<number | null>("requests").as("requests"),
        eb.fn.sum<number | null>("errors").as("errors"),
        eb.fn.max("last_request_time").as("last"),
      ])
      .where("client_id", "=", clientId)
      .where("hour", ">=", since)
      .executeTakeFirst();
    const last = await this.#db
      .selectFrom("scim_request_counts")
      .select("last_request_time")
      .where("client_id", "=", clientId)
      .orderBy("hour", "desc")
      .limit(1)
      .executeTakeFirst();
    return {
      lastRequestTime: last?.last_request_time ?? null,
      requests: Number(row?.requests ?? 0),
      errors: Number(row?.errors ?? 0),
    };
  }

  /**
   * Drops the partitions of the days that ended before `cutoffMs` and makes sure the partitions of the day of
   * `nowMs` and the next one exist, so that midnight's first batch finds its partition ready.
   */
  async maintainPartitions(nowMs: number, cutoffMs: number): Promise<{ dropped: number }> {
    const today = Math.floor(nowMs / DAY_MS);
    await this.createPartitions([today, today + 1]);
    const dropped = await dropPartitionsBefore(this.#db, Math.floor(cutoffMs / DAY_MS));
    for (const d of dropped) this.#days.delete(d);
    return { dropped: dropped.length };
  }

  async pruneCounts(before: Date, limit: number): Promise<number> {
    const result = await sql`
      delete from scim_request_counts where ctid in (
        select ctid from scim_request_counts where hour < ${before} limit ${limit})`.execute(this.#db);
    return Number(result.numAffectedRows ?? 0n);
  }
}

const INSERT_ROWS = preparedStatement("request_log_insert");

const SUMMARY_COLUMNS = [
  "id",
  "client_id",
  "organization_id",
  "time",
  "method",
  "path",
  "query",
  "status",
  "scim_type",
  "duration_ms",
  "resource_id",
  "request_truncated",
  "response_truncated",
  "user_agent",
  "client_ip",
] as const;
