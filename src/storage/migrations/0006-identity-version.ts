import { type Kysely, sql } from "kysely";

/**
 * A row version for optimistic writes (PATCH/PUT in one guarded statement). A counter rather than PostgreSQL's
 * xmin, so the SQL stays portable to PostgreSQL-compatible engines (docs/decisions.md, "Portable SQL").
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table identities add column version bigint not null default 0`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table identities drop column version`.execute(db);
}
