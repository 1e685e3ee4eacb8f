import { type Kysely, sql } from "kysely";

/**
 * The SCIM request log with fewer and cheaper indexes, since every logged request pays for each of them on insert:
 *
 * - the primary key becomes `(client_id, id)`: a connection's page, newest first, is a backward scan of it, and a
 *   single entry is read by its client and id; the separate `(client_id, id desc)` index goes. Ids are UUIDv7,
 *   so within a client new entries land at the key's right edge.
 * - the resource index keeps its columns in ascending order (scanned backward for newest first).
 * - the retention prune walks a BRIN index of `id`: ids grow with time, so a few block ranges cover a day, and
 *   BRIN costs an insert next to nothing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table scim_request_log drop constraint scim_request_log_pkey;
    drop index scim_request_log_client_idx;
    drop index scim_request_log_resource_idx;
    alter table scim_request_log add constraint scim_request_log_pkey primary key (client_id, id);
    create index scim_request_log_resource_idx on scim_request_log (client_id, resource_id, id)
      where resource_id is not null;
    create index scim_request_log_id_brin on scim_request_log using brin (id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index scim_request_log_id_brin;
    drop index scim_request_log_resource_idx;
    alter table scim_request_log drop constraint scim_request_log_pkey;
    alter table scim_request_log add constraint scim_request_log_pkey primary key (id);
    create index scim_request_log_client_idx on scim_request_log (client_id, id desc);
    create index scim_request_log_resource_idx on scim_request_log (client_id, resource_id, id desc)
      where resource_id is not null;
  `.execute(db);
}
