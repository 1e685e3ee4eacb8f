import { sql, type Kysely, type Transaction } from "kysely";
import type { Database, ResourceCountsTable } from "../storage/schema.js";

/**
 * How many users or groups an organization has: the sum of its counter shards (migration 0007-list-reads), kept
 * exact by triggers in every writing transaction — a few rows to read, whatever the organization's size.
 */
export function organizationTotal(
  db: Kysely<Database> | Transaction<Database>,
  orgId: string,
  resource: ResourceCountsTable["resource"],
) {
  return db
    .selectFrom("resource_counts")
    .select(sql<number>`coalesce(sum(n), 0)`.as("total"))
    .where("organization_id", "=", orgId)
    .where("resource", "=", resource);
}
