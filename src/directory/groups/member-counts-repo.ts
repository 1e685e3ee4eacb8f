import { sql } from "kysely";
import type { Executor } from "./repo.js";

/** Direct members (users and groups) of each given group, counted on the membership primary keys. */
export async function memberCounts(
  db: Executor,
  orgId: string,
  groupIds: readonly string[],
): Promise<Map<string, number>> {
  if (groupIds.length === 0) return new Map();
  const { rows } = await sql<{ group_id: string; n: string }>`
    select m.group_id, count(*)::text as n from (
      select group_id from group_user_members where organization_id = ${orgId} and group_id = any(${groupIds}::uuid[])
      union all
      select group_id from group_group_members where organization_id = ${orgId} and group_id = any(${groupIds}::uuid[])
    ) m
    group by m.group_id
  `.execute(db);
  return new Map(rows.map((r) => [r.group_id, Number(r.n)]));
}
