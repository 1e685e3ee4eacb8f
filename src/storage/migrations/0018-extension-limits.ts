import { type Kysely, sql } from "kysely";

/**
 * Extension values of any length (docs/scim-extensions.md "Long values"): the side tables index the SHA-256 digest
 * of a value instead of the value itself, whose B-tree entry could not exceed ~2 700 bytes; eq filters and
 * uniqueness compare digests. The constraint and index names stay, so the code that recognises them does not change.
 * And the size of a client's declaration (docs/scim-extensions.md "Limits"), so a list page is bounded by bytes
 * without serialising every declaration to measure it.
 */
const SIDE_TABLES = [
  { table: "identity_extension_values", owner: "identity_id" },
  { table: "group_extension_values", owner: "group_id" },
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const { table, owner } of SIDE_TABLES) {
    const t = sql.table(table);
    await sql`alter table ${t} add column value_digest bytea`.execute(db);
    await sql`update ${t} set value_digest = sha256(convert_to(value, 'UTF8'))`.execute(db);
    await sql`alter table ${t} alter column value_digest set not null`.execute(db);
    await sql`alter table ${t} drop constraint ${sql.raw(`${table}_pkey`)}`.execute(db);
    await sql`alter table ${t} add constraint ${sql.raw(`${table}_pkey`)}
      primary key (${sql.ref(owner)}, attribute, value_digest)`.execute(db);
    await sql`drop index ${sql.raw(`${table}_lookup_idx`)}`.execute(db);
    await sql`create index ${sql.raw(`${table}_lookup_idx`)}
      on ${t} (organization_id, attribute, value_digest, ${sql.ref(owner)})`.execute(db);
    await sql`drop index ${sql.raw(`${table}_unique_key`)}`.execute(db);
    await sql`create unique index ${sql.raw(`${table}_unique_key`)}
      on ${t} (organization_id, attribute, value_digest) where is_unique`.execute(db);
  }
  await sql`alter table scim_clients add column extensions_bytes integer not null default 0`.execute(db);
  await sql`update scim_clients set extensions_bytes = octet_length(extensions::text) where extensions <> '[]'::jsonb`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table scim_clients drop column extensions_bytes`.execute(db);
  for (const { table, owner } of SIDE_TABLES) {
    const t = sql.table(table);
    await sql`drop index ${sql.raw(`${table}_unique_key`)}`.execute(db);
    await sql`create unique index ${sql.raw(`${table}_unique_key`)} on ${t} (organization_id, attribute, value)
      where is_unique`.execute(db);
    await sql`drop index ${sql.raw(`${table}_lookup_idx`)}`.execute(db);
    await sql`create index ${sql.raw(`${table}_lookup_idx`)}
      on ${t} (organization_id, attribute, value, ${sql.ref(owner)})`.execute(db);
    await sql`alter table ${t} drop constraint ${sql.raw(`${table}_pkey`)}`.execute(db);
    await sql`alter table ${t} add constraint ${sql.raw(`${table}_pkey`)} primary key (${sql.ref(owner)}, attribute, value)`.execute(
      db,
    );
    await sql`alter table ${t} drop column value_digest`.execute(db);
  }
}
