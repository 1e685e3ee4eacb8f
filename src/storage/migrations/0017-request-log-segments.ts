import { type Kysely, sql } from "kysely";
import { decodeSegment, encodeSegment, type RequestLogEntry, type Segment } from "../request-log-segments.js";

/**
 * The SCIM request log in segments: one row per client and written batch (up to a few hundred entries), instead of
 * a row per entry with its index entries; the entries travel in two compressed values (their fields, their bodies:
 * storage/request-log-segments.ts holds the format). PostgreSQL stores an entry for a fraction of the CPU.
 *
 * - `first_id` … `last_id`: the range of the entries' ids (UUIDv7, so also of their times). The primary key
 *   `(client_id, last_id)` gives a connection's segments newest first; segments two instances wrote over the same
 *   seconds may overlap, and the reader merges them.
 * - `statuses`, `methods`, `resource_ids`: what the segment holds, distinct, so that a filtered read opens only the
 *   segments that can match.
 * - `entries` and `bodies` are compressed already: stored out of line as they are (`external`).
 * - the retention prune walks `(last_id)`: a segment goes once its newest entry is past the retention.
 *
 * Existing entries move into segments of up to 500, and back on the way down.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table scim_request_log_segments (
      client_id text not null,
      last_id uuid not null,
      first_id uuid not null,
      organization_id uuid not null,
      entry_count integer not null,
      statuses smallint[] not null,
      methods text[] not null,
      resource_ids text[] not null,
      entries bytea not null,
      bodies bytea not null,
      constraint scim_request_log_segments_pkey primary key (client_id, last_id)
    );
    alter table scim_request_log_segments
      alter column entries set storage external,
      alter column bodies set storage external,
      alter column resource_ids set storage external;
    create index scim_request_log_segments_last_id_idx on scim_request_log_segments (last_id);
  `.execute(db);

  let after: { client: string; id: string } | undefined;
  for (;;) {
    const rows = (
      await sql<RequestLogEntry>`
        select id::text, client_id, organization_id::text, time, method, path, query, status, scim_type,
               duration_ms, resource_id, request_body, request_truncated, response_body, response_truncated,
               user_agent
          from scim_request_log
         where ${after === undefined ? sql`true` : sql`(client_id, id) > (${after.client}, ${after.id}::uuid)`}
         order by client_id, id
         limit ${SEGMENT_SIZE}`.execute(db)
    ).rows;
    if (rows.length === 0) break;
    const last = rows.at(-1) as RequestLogEntry;
    after = { client: last.client_id, id: last.id };
    for (const entries of byClient(rows)) await insertSegment(db, await encodeSegment(entries));
  }
  await sql`drop table scim_request_log`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
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
      constraint scim_request_log_pkey primary key (client_id, id)
    );
    create index scim_request_log_resource_idx on scim_request_log (client_id, resource_id, id)
      where resource_id is not null;
    create index scim_request_log_id_brin on scim_request_log using brin (id);
  `.execute(db);

  let after: { client: string; last: string } | undefined;
  for (;;) {
    const segment = (
      await sql<Segment>`
        select client_id, last_id::text, organization_id::text, entries, bodies
          from scim_request_log_segments
         where ${after === undefined ? sql`true` : sql`(client_id, last_id) > (${after.client}, ${after.last}::uuid)`}
         order by client_id, last_id
         limit 1`.execute(db)
    ).rows[0];
    if (segment === undefined) break;
    after = { client: segment.client_id, last: segment.last_id };
    for (const e of await decodeSegment(segment)) {
      await sql`
        insert into scim_request_log (id, client_id, organization_id, time, method, path, query, status, scim_type,
          duration_ms, resource_id, request_body, request_truncated, response_body, response_truncated, user_agent)
        values (${e.id}::uuid, ${e.client_id}, ${e.organization_id}::uuid, ${e.time}, ${e.method}, ${e.path},
          ${e.query}, ${e.status}, ${e.scim_type}, ${e.duration_ms}, ${e.resource_id}, ${e.request_body},
          ${e.request_truncated}, ${e.response_body}, ${e.response_truncated}, ${e.user_agent})`.execute(db);
    }
  }
  await sql`drop table scim_request_log_segments`.execute(db);
}

const SEGMENT_SIZE = 500;

/** Consecutive rows of one client (the rows are ordered by client). */
function byClient(rows: readonly RequestLogEntry[]): RequestLogEntry[][] {
  const out: RequestLogEntry[][] = [];
  for (const row of rows) {
    const current = out.at(-1);
    if (current !== undefined && current[0]?.client_id === row.client_id) current.push(row);
    else out.push([row]);
  }
  return out;
}

async function insertSegment(db: Kysely<unknown>, s: Segment): Promise<void> {
  await sql`
    insert into scim_request_log_segments (client_id, last_id, first_id, organization_id, entry_count, statuses,
      methods, resource_ids, entries, bodies)
    values (${s.client_id}, ${s.last_id}::uuid, ${s.first_id}::uuid, ${s.organization_id}::uuid, ${s.entry_count},
      ${s.statuses}::smallint[], ${s.methods}::text[], ${s.resource_ids}::text[], ${s.entries}, ${s.bodies})`.execute(
    db,
  );
}
