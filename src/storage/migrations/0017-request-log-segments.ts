import { type Kysely, sql } from "kysely";

/**
 * The table in which versions before 0026 kept the SCIM request log: one row per client and written batch, the
 * entries in two Brotli-compressed values. Those versions moved the row-per-entry table's entries into it here; this
 * migration now leaves them where they are, and 0026 moves them — from here or from there — into its daily
 * partitions. The table stays for a database that already holds segments, until 0026 reads and drops it.
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
    create index scim_request_log_segments_last_id_idx on scim_request_log_segments (last_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table scim_request_log_segments`.execute(db);
}
