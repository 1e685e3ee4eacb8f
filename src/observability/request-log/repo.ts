import { sql } from "kysely";
import { type CopyColumn, copyRows } from "../../storage/copy.js";
import type { Db } from "../../storage/database.js";
import {
  decodeBodies,
  decodeSummaries,
  encodeSegment,
  type RequestLogEntry,
  type RequestLogSummary,
  type Segment,
} from "../../storage/request-log-segments.js";

export type { RequestLogEntry, RequestLogSummary } from "../../storage/request-log-segments.js";

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
 * The request log in segments (storage/request-log-segments.ts): each written batch becomes one row per client
 * holding its entries in two compressed values (their fields, their bodies), so PostgreSQL stores a batch as a
 * handful of small rows instead of an indexed row per entry. Reads open the segments newest first and pick the entries out in Roster; a
 * segment says which statuses, methods and resources it holds, so a filtered read skips those that cannot match.
 */
export class RequestLogRepo implements RequestLogStore {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  /** One COPY per batch (storage/copy.ts), a segment per client in it. */
  async insert(entries: readonly RequestLogEntry[]): Promise<void> {
    const byClient = new Map<string, RequestLogEntry[]>();
    for (const e of entries) {
      const list = byClient.get(e.client_id);
      if (list === undefined) byClient.set(e.client_id, [e]);
      else list.push(e);
    }
    const segments = await Promise.all([...byClient.values()].map(encodeSegment));
    await copyRows(
      this.#db,
      "scim_request_log_segments",
      SEGMENT_COLUMNS,
      segments.map((segment) => SEGMENT_COLUMNS.map((c) => segment[c.name])),
    );
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

  /**
   * Up to `limit` entries older than `before`, newest first. Segments come newest first (a backward scan of the
   * primary key) a few at a time; reading stops once the next segment's newest entry is older than the page's
   * oldest, since no later segment can hold a newer one (segments of two instances may overlap: their entries are
   * merged by id).
   */
  async list(
    clientId: string,
    filter: RequestLogFilter,
    before: string | undefined,
    limit: number,
  ): Promise<RequestLogSummary[]> {
    const found: RequestLogSummary[] = [];
    let below: string | undefined;
    for (;;) {
      let q = this.#db
        .selectFrom("scim_request_log_segments")
        .select(["client_id", "organization_id", "last_id", "entries"])
        .where("client_id", "=", clientId)
        .orderBy("last_id", "desc")
        .limit(SEGMENTS_PER_READ);
      if (before !== undefined) q = q.where("first_id", "<", before);
      if (below !== undefined) q = q.where("last_id", "<", below);
      const status = filter.status;
      if (status !== undefined) {
        q = q.where(
          sql<boolean>`exists (select from unnest(statuses) s where s between ${status.min} and ${status.max})`,
        );
      }
      if (filter.method !== undefined) q = q.where(sql<boolean>`${filter.method} = any(methods)`);
      if (filter.resourceId !== undefined) q = q.where(sql<boolean>`${filter.resourceId} = any(resource_ids)`);
      const segments = await q.execute();
      for (const segment of segments) {
        if (found.length >= limit && (found[limit - 1] as RequestLogSummary).id > segment.last_id) {
          return found.slice(0, limit);
        }
        for (const e of await decodeSummaries(segment)) {
          if (matches(e, filter, before)) found.push(e);
        }
        found.sort(newestFirst);
        // Entries past the limit can never make the page: anything read later that is newer pushes them out.
        if (found.length > limit) found.length = limit;
        below = segment.last_id;
      }
      if (segments.length < SEGMENTS_PER_READ) return found.slice(0, limit);
    }
  }

  /** The segments whose id range holds `id` (one, or a few where instances overlapped), and the entry in them. */
  async get(clientId: string, id: string): Promise<RequestLogEntry | undefined> {
    const segments = await this.#db
      .selectFrom("scim_request_log_segments")
      .select(["client_id", "organization_id", "entries", "bodies"])
      .where("client_id", "=", clientId)
      .where("last_id", ">=", id)
      .where("first_id", "<=", id)
      .execute();
    for (const segment of segments) {
      const summaries = await decodeSummaries(segment);
      const index = summaries.findIndex((e) => e.id === id);
      if (index < 0) continue;
      const bodies = await decodeBodies(segment.bodies, index);
      return {
        ...(summaries[index] as RequestLogSummary),
        request_body: bodies.request,
        response_body: bodies.response,
      };
    }
    return undefined;
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
   * Deletes up to `limit` segments whose newest entry is older than `cutoffId` (a UUIDv7 bound), found through the
   * `(last_id)` index; resolves with the number of entries they held.
   */
  async pruneEntries(cutoffId: string, limit: number): Promise<{ segments: number; entries: number }> {
    const result = await sql<{ segments: number; entries: number }>`
      with gone as (
        delete from scim_request_log_segments where ctid = any(array(
          select ctid from scim_request_log_segments where last_id < ${cutoffId}::uuid limit ${limit}))
        returning entry_count)
      select count(*)::int as segments, coalesce(sum(entry_count), 0)::int as entries from gone`.execute(this.#db);
    return result.rows[0] ?? { segments: 0, entries: 0 };
  }

  async pruneCounts(before: Date, limit: number): Promise<number> {
    const result = await sql`
      delete from scim_request_counts where ctid in (
        select ctid from scim_request_counts where hour < ${before} limit ${limit})`.execute(this.#db);
    return Number(result.numAffectedRows ?? 0n);
  }
}

/** Segments read per round trip: the first usually holds a whole page. */
const SEGMENTS_PER_READ = 4;

const SEGMENT_COLUMNS: readonly (CopyColumn & { readonly name: keyof Segment })[] = [
  { name: "client_id", type: "text" },
  { name: "last_id", type: "uuid" },
  { name: "first_id", type: "uuid" },
  { name: "organization_id", type: "uuid" },
  { name: "entry_count", type: "int4" },
  { name: "statuses", type: "int2[]" },
  { name: "methods", type: "text[]" },
  { name: "resource_ids", type: "text[]" },
  { name: "entries", type: "bytea" },
  { name: "bodies", type: "bytea" },
];

function matches(e: RequestLogSummary, filter: RequestLogFilter, before: string | undefined): boolean {
  if (before !== undefined && e.id >= before) return false;
  if (filter.status !== undefined && (e.status < filter.status.min || e.status > filter.status.max)) return false;
  if (filter.method !== undefined && e.method !== filter.method) return false;
  if (filter.resourceId !== undefined && e.resource_id !== filter.resourceId) return false;
  return true;
}

const newestFirst = (a: RequestLogSummary, b: RequestLogSummary): number => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/** The smallest UUIDv7 of a millisecond: every id made before it sorts below. */
export function uuidv7Floor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}
