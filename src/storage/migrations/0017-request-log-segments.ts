import { type Kysely, sql } from "kysely";

/**
 * The SCIM request log in segments: one row per client and written batch (up to a few hundred entries), instead of
 * a row per entry with its index entries. PostgreSQL then stores an entry for about a third of the CPU (no btree
 * insert per entry; the entries travel as one value).
 *
 * - `entries`: the segment's entries without their bodies, as a UTF-8 JSON array of arrays, oldest first, each
 *   `[id, time (ms since the epoch), method, path, query, status, scim_type, duration_ms, resource_id,
 *   request_truncated, response_truncated, user_agent]`.
 * - `bodies`: the entries' request bodies in the same order, then their response bodies (UTF-8; null: none). Apart
 *   from the JSON, a body is copied as it is instead of escaped into a JSON string (a third of the writer's CPU),
 *   and a page of the log does not read it.
 * - both are `bytea`: nothing in SQL reads them, and PostgreSQL skips checking the encoding of every byte; stored
 *   out of line uncompressed (`external`): compressing costs more CPU than the disk it saves.
 * - `first_id` … `last_id`: the range of the entries' ids (UUIDv7, so also of their times). The primary key
 *   `(client_id, last_id)` gives a connection's segments newest first; segments written by two instances at once
 *   may overlap, and the reader merges them.
 * - `statuses`, `methods`, `resource_ids`: what the segment holds, distinct, so that a filtered read opens only the
 *   segments that can match.
 * - the retention prune walks `(last_id)`: a segment goes once its newest entry is past the retention.
 *
 * Existing entries move into segments of 500.
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
      bodies bytea[] not null,
      constraint scim_request_log_segments_pkey primary key (client_id, last_id)
    );
    alter table scim_request_log_segments
      alter column entries set storage external,
      alter column bodies set storage external,
      alter column resource_ids set storage external;
    create index scim_request_log_segments_last_id_idx on scim_request_log_segments (last_id);

    insert into scim_request_log_segments
      (client_id, last_id, first_id, organization_id, entry_count, statuses, methods, resource_ids, entries, bodies)
    select client_id,
           (array_agg(id order by id desc))[1],
           (array_agg(id order by id))[1],
           (array_agg(organization_id order by id desc))[1],
           count(*),
           array_agg(distinct status),
           array_agg(distinct method),
           coalesce(array_agg(distinct resource_id) filter (where resource_id is not null), '{}'),
           convert_to(json_agg(json_build_array(
             id, (extract(epoch from time) * 1000)::bigint, method, path, query, status, scim_type, duration_ms,
             resource_id, request_truncated, response_truncated, user_agent
           ) order by id)::text, 'UTF8'),
           array_agg(convert_to(request_body, 'UTF8') order by id)
             || array_agg(convert_to(response_body, 'UTF8') order by id)
      from (select *, (row_number() over (partition by client_id order by id) - 1) / 500 as segment
              from scim_request_log) numbered
     group by client_id, segment;

    drop table scim_request_log;
  `.execute(db);
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

    insert into scim_request_log
    select (e->>0)::uuid, s.client_id, s.organization_id, to_timestamp((e->>1)::double precision / 1000),
           e->>2, e->>3, e->>4, (e->>5)::smallint, e->>6, (e->>7)::double precision, e->>8,
           convert_from(s.bodies[i], 'UTF8'), (e->>9)::boolean,
           convert_from(s.bodies[s.entry_count + i], 'UTF8'), (e->>10)::boolean, e->>11
      from scim_request_log_segments s,
           json_array_elements(convert_from(s.entries, 'UTF8')::json) with ordinality as x(e, i);

    drop table scim_request_log_segments;
  `.execute(db);
}
