import { promisify } from "node:util";
import { brotliDecompress } from "node:zlib";
import { type Kysely, sql } from "kysely";
import { createPartitionStatement, dayOfId, insertRows, type RequestLogEntry } from "../request-log-partitions.js";

/**
 * The SCIM request log as plain rows, one per request, in daily partitions by range of `id` (a UUIDv7, so a day's
 * ids form one range: storage/request-log-partitions.ts), with a `client_ip` column:
 *
 * - primary key `(client_id, id)`: a connection's page, newest first, is a backward scan of it, newest partition
 *   first; one entry is read by its client and id in one partition.
 * - `(client_id, resource_id, id)` where a resource id is known: a resource's entries.
 * - retention drops a day's partition (no DELETE, hence no index on time).
 *
 * The entries already kept move in: from the segments that versions since 0017 wrote (decoded here, the only reader
 * of that format left), and from the row-per-entry table of 0016 where 0017 left it. The segment table itself stays,
 * so that the previous release's instances can still write during a rolling upgrade (what they write there is not
 * shown by this release); the release after this one drops it. The way down puts every entry back into a
 * row-per-entry table of 0016's shape (client IPs dropped) and empties the segment table, whose entries are in it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const legacy = await exists(db, "scim_request_log");
  if (legacy) {
    await sql`
      alter table scim_request_log rename to scim_request_log_0016;
      alter table scim_request_log_0016 rename constraint scim_request_log_pkey to scim_request_log_0016_pkey;
      drop index scim_request_log_resource_idx;
      drop index scim_request_log_id_brin;
    `.execute(db);
  }
  await sql`
    create table scim_request_log (
      id uuid not null,
      client_id text not null,
      organization_id uuid not null,
      time timestamptz not null,
      method text not null,
      path text not null,
      query text not null,
      status smallint not null,
      scim_type text,
      duration_ms double precision not null,
      resource_id text,
      request_body text,
      request_truncated boolean not null default false,
      response_body text,
      response_truncated boolean not null default false,
      user_agent text,
      client_ip text,
      constraint scim_request_log_pkey primary key (client_id, id)
    ) partition by range (id);
    create index scim_request_log_resource_idx on scim_request_log (client_id, resource_id, id)
      where resource_id is not null;
  `.execute(db);

  if (legacy) {
    const days = await sql<{ day: string }>`
      select distinct (('x' || translate(left(id::text, 13), '-', ''))::bit(48)::bigint / 86400000)::text as day
        from scim_request_log_0016`.execute(db);
    for (const { day } of days.rows) await createPartitionStatement(Number(day)).execute(db);
    await sql`
      insert into scim_request_log (${sql.raw(COLUMNS_0016)}) select ${sql.raw(COLUMNS_0016)} from scim_request_log_0016;
      drop table scim_request_log_0016;
    `.execute(db);
  }

  if (await exists(db, "scim_request_log_segments")) {
    let after: { client: string; last: string } | undefined;
    for (;;) {
      const segments = (
        await sql<Segment>`
          select client_id, last_id::text, organization_id::text, entries, bodies
            from scim_request_log_segments
           where ${after === undefined ? sql`true` : sql`(client_id, last_id) > (${after.client}, ${after.last}::uuid)`}
           order by client_id, last_id
           limit 20`.execute(db)
      ).rows;
      const last = segments.at(-1);
      if (last === undefined) break;
      after = { client: last.client_id, last: last.last_id };
      const entries = (await Promise.all(segments.map(decodeSegment))).flat();
      for (const day of new Set(entries.map((e) => dayOfId(e.id)))) await createPartitionStatement(day).execute(db);
      await insertRows(db, entries);
    }
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table scim_request_log_0016 (
      id uuid not null,
      client_id text not null,
      organization_id uuid not null,
      time timestamptz not null,
      method text not null,
      path text not null,
      query text not null,
      status smallint not null,
      scim_type text,
      duration_ms double precision not null,
      resource_id text,
      request_body text,
      request_truncated boolean not null default false,
      response_body text,
      response_truncated boolean not null default false,
      user_agent text
    );
    insert into scim_request_log_0016 (${sql.raw(COLUMNS_0016)}) select ${sql.raw(COLUMNS_0016)} from scim_request_log;
    drop table scim_request_log;
    alter table scim_request_log_0016 rename to scim_request_log;
    alter table scim_request_log add constraint scim_request_log_pkey primary key (client_id, id);
    create index scim_request_log_resource_idx on scim_request_log (client_id, resource_id, id)
      where resource_id is not null;
    create index scim_request_log_id_brin on scim_request_log using brin (id);
    truncate scim_request_log_segments;
  `.execute(db);
}

const COLUMNS_0016 =
  "id, client_id, organization_id, time, method, path, query, status, scim_type, duration_ms, resource_id, " +
  "request_body, request_truncated, response_body, response_truncated, user_agent";

async function exists(db: Kysely<unknown>, table: string): Promise<boolean> {
  const row = await sql<{ found: boolean }>`select to_regclass(${table}) is not null as found`.execute(db);
  return row.rows[0]?.found === true;
}

interface Segment {
  readonly client_id: string;
  readonly last_id: string;
  readonly organization_id: string;
  readonly entries: Buffer;
  readonly bodies: Buffer;
}

const decompress = promisify(brotliDecompress);

/**
 * A segment's entries. `entries` is a JSON array with an array of fields per entry (id, time in ms, method, path,
 * query, status, scimType, durationMs, resourceId, requestTruncated, responseTruncated, userAgent); `bodies` holds
 * each entry's request body then response body, each a 32-bit big-endian byte length (-1: none) and its UTF-8.
 */
async function decodeSegment(segment: Segment): Promise<RequestLogEntry[]> {
  const fields = JSON.parse((await decompress(segment.entries)).toString("utf8")) as unknown[][];
  const bodies = await decompress(segment.bodies);
  let at = 0;
  const body = (): string | null => {
    const length = bodies.readInt32BE(at);
    at += 4;
    if (length < 0) return null;
    at += length;
    return bodies.toString("utf8", at - length, at);
  };
  return fields.map((f) => ({
    id: f[0] as string,
    client_id: segment.client_id,
    organization_id: segment.organization_id,
    time: new Date(f[1] as number),
    method: f[2] as string,
    path: f[3] as string,
    query: f[4] as string,
    status: f[5] as number,
    scim_type: f[6] as string | null,
    duration_ms: f[7] as number,
    resource_id: f[8] as string | null,
    request_body: body(),
    request_truncated: f[9] as boolean,
    response_body: body(),
    response_truncated: f[10] as boolean,
    user_agent: f[11] as string | null,
    client_ip: null,
  }));
}
