import { type Kysely, sql } from "kysely";

/**
 * What a user's write costs PostgreSQL, without changing what any read is served by:
 *
 * - `identities_org_employee_number_idx` (organization, employee_number as stored) answers no statement: the
 *   attribute is not caseExact (RFC 7643 §4.3), so every filter and sort on it compares `lower(employee_number)`,
 *   served by `identities_org_lower_employee_number_idx` (0019). Every insert and every update of an identity
 *   (none is HOT: `updated_at` is indexed) still wrote an entry into it: one of eight index entries per write.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop index identities_org_employee_number_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index identities_org_employee_number_idx on identities (organization_id, employee_number)`.execute(
    db,
  );
}
