import { type Kysely, type RawBuilder, sql } from "kysely";
import type { PreparedStatement } from "./prepared.js";

/**
 * The SCIM request log's daily partitions (`scim_request_log`, migration 0026). The table is partitioned by range of
 * its `id`: a UUIDv7 starts with its millisecond, so the ids of one UTC day form one range, and a page of the log
 * (by id, newest first) or one entry (by id) opens only the partitions that can hold it. Retention drops a whole
 * day's partition — no DELETE, no dead rows, no vacuum.
 *
 * A partition is named after its day, `scim_request_log_pYYYYMMDD`; what else is attached to the table is left alone.
 */

/** One SCIM request as the log keeps it: bodies redacted and cut at 64 KiB (observability/request-log/entry.ts). */
export interface RequestLogEntry extends RequestLogSummary {
  readonly request_body: string | null;
  readonly response_body: string | null;
}

/** An entry without its bodies, as a page of the log shows it. */
export interface RequestLogSummary {
  readonly id: string;
  readonly client_id: string;
  readonly organization_id: string;
  readonly time: Date;
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly status: number;
  readonly scim_type: string | null;
  readonly duration_ms: number;
  readonly resource_id: string | null;
  readonly request_truncated: boolean;
  readonly response_truncated: boolean;
  readonly user_agent: string | null;
  readonly client_ip: string | null;
}

export const DAY_MS = 24 * 3600_000;

const PARENT = "scim_request_log";
const NAME = /^scim_request_log_p(\d{4})(\d{2})(\d{2})$/;
/** DDL on the log must not queue behind a long read and stall every writer queued behind it in turn. */
const DDL_LOCK_TIMEOUT = "5s";

// biome-ignore lint/suspicious/noExplicitAny: any database: only raw SQL is run.
type AnyDb = Kysely<any>;

/** The smallest UUIDv7 of a millisecond: every id made before it sorts below. */
export function uuidv7Floor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}

/** The UTC day (days since 1970-01-01) of a UUIDv7's millisecond. */
export function dayOfId(id: string): number {
  return Math.floor(Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16) / DAY_MS);
}

export function partitionName(day: number): string {
  const d = new Date(day * DAY_MS);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${PARENT}_p${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}`;
}

/** `create table if not exists` of a day's partition. */
export function createPartitionStatement(day: number): RawBuilder<unknown> {
  return sql`
    create table if not exists ${sql.id(partitionName(day))} partition of ${sql.id(PARENT)}
      for values from (${sql.lit(uuidv7Floor(day * DAY_MS))}) to (${sql.lit(uuidv7Floor((day + 1) * DAY_MS))})`;
}

/**
 * Creates the partitions of these days that do not exist yet. Two instances may create the same one at once: the
 * loser's error is ignored once the partition is there.
 */
export async function createPartitions(db: AnyDb, days: Iterable<number>): Promise<void> {
  for (const day of new Set(days)) {
    try {
      await db.transaction().execute(async (tx) => {
        await sql`set local lock_timeout = ${sql.lit(DDL_LOCK_TIMEOUT)}`.execute(tx);
        await createPartitionStatement(day).execute(tx);
      });
    } catch (e) {
      // 42P07 duplicate_table, 23505 the catalog's unique index: another instance created it meanwhile.
      const state = (e as { code?: unknown } | null)?.code;
      if ((state !== "42P07" && state !== "23505") || !(await partitionDays(db)).includes(day)) throw e;
    }
  }
}

/** The days of the partitions attached to the log, oldest first. */
export async function partitionDays(db: AnyDb): Promise<number[]> {
  const rows = await sql<{ name: string }>`
    select c.relname as name
      from pg_inherits i join pg_class c on c.oid = i.inhrelid
     where i.inhparent = to_regclass(${PARENT})`.execute(db);
  const days: number[] = [];
  for (const { name } of rows.rows) {
    const m = NAME.exec(name);
    if (m !== null) days.push(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / DAY_MS);
  }
  return days.sort((a, b) => a - b);
}

/** Drops every partition of a day before `day`; resolves with the days dropped. */
export async function dropPartitionsBefore(db: AnyDb, day: number): Promise<number[]> {
  const dropped: number[] = [];
  for (const d of await partitionDays(db)) {
    if (d >= day) break;
    await db.transaction().execute(async (tx) => {
      await sql`set local lock_timeout = ${sql.lit(DDL_LOCK_TIMEOUT)}`.execute(tx);
      await sql`drop table if exists ${sql.id(partitionName(d))}`.execute(tx);
    });
    dropped.push(d);
  }
  return dropped;
}

/**
 * Writes entries (their partitions exist) with one statement: each column travels as one array parameter and
 * `unnest` turns the arrays back into rows. The two body columns travel as JSON arrays instead: JSON.stringify escapes
 * a list page's body in native code, where a text[] parameter has pg escape every quote of every body in JavaScript,
 * on the event loop that serves requests (0.6 ms for one page of 100 users).
 */
export async function insertRows(
  db: AnyDb,
  entries: readonly RequestLogEntry[],
  statement?: PreparedStatement,
): Promise<void> {
  const n = entries.length;
  if (n === 0) return;
  const column = <T>(pick: (e: RequestLogEntry) => T): T[] => {
    const out = new Array<T>(n);
    for (let i = 0; i < n; i++) out[i] = pick(entries[i] as RequestLogEntry);
    return out;
  };
  const texts = (pick: (e: RequestLogEntry) => string | null) =>
    sql`array(select b from json_array_elements_text(${JSON.stringify(column(pick))}::json) with ordinality as t(b, i)
      order by i)`;
  const template = statement === undefined ? sql : statement.sql;
  await template`
    insert into scim_request_log (id, client_id, organization_id, time, method, path, query, status, scim_type,
      duration_ms, resource_id, request_body, request_truncated, response_body, response_truncated, user_agent,
      client_ip)
    select * from unnest(${column((e) => e.id)}::uuid[], ${column((e) => e.client_id)}::text[],
      ${column((e) => e.organization_id)}::uuid[], ${column((e) => e.time.toISOString())}::timestamptz[],
      ${column((e) => e.method)}::text[], ${column((e) => e.path)}::text[], ${column((e) => e.query)}::text[],
      ${column((e) => e.status)}::smallint[], ${column((e) => e.scim_type)}::text[],
      ${column((e) => e.duration_ms)}::float8[], ${column((e) => e.resource_id)}::text[],
      ${texts((e) => e.request_body)}, ${column((e) => e.request_truncated)}::bool[],
      ${texts((e) => e.response_body)}, ${column((e) => e.response_truncated)}::bool[],
      ${column((e) => e.user_agent)}::text[], ${column((e) => e.client_ip)}::text[])`.execute(db);
}
