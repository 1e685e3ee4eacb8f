import { type Kysely, sql } from "kysely";

/**
 * Indexes for the filter forms IdPs send beyond the identifiers (docs/scim-users.md "Filters"):
 * - `meta.lastModified gt "…"` (incremental reads) and sortBy=meta.lastModified, on users and groups;
 * - `employeeNumber eq "…"`, which compares case-insensitively (the attribute is not caseExact, RFC 7643 §4.3).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create index identities_org_updated_at_idx on identities (organization_id, updated_at);
    create index identities_org_lower_employee_number_idx on identities (organization_id, lower(employee_number));
    create index directory_groups_org_updated_at_idx on directory_groups (organization_id, updated_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index directory_groups_org_updated_at_idx;
    drop index identities_org_lower_employee_number_idx;
    drop index identities_org_updated_at_idx;
  `.execute(db);
}
