import { type Insertable, type Selectable, sql } from "kysely";
import { type CopyColumn, type CopyValue, copyRows } from "../../storage/copy.js";
import type { Db } from "../../storage/database.js";
import type { ScimRequestLogTable } from "../../storage/schema.js";

export type RequestLogRow = Selectable<ScimRequestLogTable>;
export type NewRequestLogRow = Insertable<ScimRequestLogTable>;

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
  insert(rows: readonly NewRequestLogRow[]): Promise<void>;
  addCounts(deltas: readonly CountDelta[]): Promise<void>;
}

export class RequestLogRepo implements RequestLogStore {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  /** One COPY per batch (storage/copy.ts): PostgreSQL's cheapest way to append many rows. */
  async insert(rows: readonly NewRequestLogRow[]): Promise<void> {
    await copyRows(this.#db, "scim_request_log", COLUMNS, rows.map(fieldsOf));
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

  /** Newest first: a backward scan of the primary key (client_id, id) or, with a resource id, of the resource index. */
  async list(
    clientId: string,
    filter: RequestLogFilter,
    before: string | undefined,
    limit: number,
  ): Promise<RequestLogRow[]> {
    let q = this.#db
      .selectFrom("scim_request_log")
      .selectAll()
      .where("client_id", "=", clientId)
      .orderBy("id", "desc")
      .limit(limit);
    if (filter.resourceId !== undefined) {
      q = q.where("resource_id", "=", filter.resourceId).where("resource_id", "is not", null);
    }
    if (filter.status !== undefined) {
      q = q.where("status", ">=", filter.status.min).where("status", "<=", filter.status.max);
    }
    if (filter.method !== undefined) q = q.where("method", "=", filter.method);
    if (before !== undefined) q = q.where("id", "<", before);
    return q.execute();
  }

  async get(clientId: string, id: string): Promise<RequestLogRow | undefined> {
    return this.#db
      .selectFrom("scim_request_log")
      .selectAll()
      .where("id", "=", id)
      .where("client_id", "=", clientId)
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

  /** Deletes up to `limit` entries older than `cutoffId` (a UUIDv7 bound), found through the BRIN index of `id`. */
  async pruneEntries(cutoffId: string, limit: number): Promise<number> {
    const result = await sql`
      delete from scim_request_log where ctid = any(array(
        select ctid from scim_request_log where id < ${cutoffId}::uuid limit ${limit}))`.execute(this.#db);
    return Number(result.numAffectedRows ?? 0n);
  }

  async pruneCounts(before: Date, limit: number): Promise<number> {
    const result = await sql`
      delete from scim_request_counts where ctid in (
        select ctid from scim_request_counts where hour < ${before} limit ${limit})`.execute(this.#db);
    return Number(result.numAffectedRows ?? 0n);
  }
}

const COLUMNS: readonly (CopyColumn & { readonly name: keyof NewRequestLogRow })[] = [
  { name: "id", type: "uuid" },
  { name: "client_id", type: "text" },
  { name: "organization_id", type: "uuid" },
  { name: "time", type: "timestamptz" },
  { name: "method", type: "text" },
  { name: "path", type: "text" },
  { name: "query", type: "text" },
  { name: "status", type: "int2" },
  { name: "scim_type", type: "text" },
  { name: "duration_ms", type: "float8" },
  { name: "resource_id", type: "text" },
  { name: "request_body", type: "text" },
  { name: "request_truncated", type: "bool" },
  { name: "response_body", type: "text" },
  { name: "response_truncated", type: "bool" },
  { name: "user_agent", type: "text" },
];

/** A row's values in the order of COLUMNS. */
const fieldsOf = (row: NewRequestLogRow): CopyValue[] => COLUMNS.map((c) => row[c.name]);

/** The smallest UUIDv7 of a millisecond: every id made before it sorts below. */
export function uuidv7Floor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}
