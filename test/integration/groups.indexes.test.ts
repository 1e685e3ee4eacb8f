import { CompiledQuery, type Compilable, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uuidv7 } from "../../src/platform/ids.js";
import { countQuery, pageQuery } from "../../src/directory/groups/repo.js";
import type { GroupFilter, GroupPage } from "../../src/directory/groups/types.js";
import { createTestDatabase, type TestDatabase } from "../helpers/app.js";

/**
 * Every Groups filter and both pagination methods are served by an index. The plans are those of
 * the repository's own statements, on an organization of 2 000 groups next to one of 40 000.
 */
let database: TestDatabase;
const org = uuidv7();
const noise = uuidv7();

beforeAll(async () => {
  database = await createTestDatabase();
  const db = database.db;
  await db
    .insertInto("organizations")
    .values([
      { id: org, name: "mine" },
      { id: noise, name: "noise" },
    ])
    .execute();
  // Distinct update times, as real groups have: identical ones would make the (organization, updated_at) index a
  // deduplicated sliver the planner prefers for an unfiltered page.
  const seed = (orgId: string, n: number) =>
    sql`
    insert into directory_groups (id, organization_id, display_name, external_id, created_at, updated_at)
    select gen_random_uuid(), ${orgId}::uuid, 'Group ' || i, 'ext-' || i, now(), now() - i * interval '1 second'
    from generate_series(1, ${n}::int) as i`.execute(db);
  await seed(org, 2000);
  await seed(noise, 40000);
  // The groups of this organization and 10 000 of the other hold an indexed extension value (0014-group-extensions).
  await sql`insert into group_extension_values (group_id, organization_id, attribute, value, value_digest, is_unique)
    select id, organization_id, 'urn:acme:group:code', external_id, sha256(convert_to(external_id, 'UTF8')), true
    from directory_groups where organization_id = ${org} union all
    (select id, organization_id, 'urn:acme:group:code', external_id, sha256(convert_to(external_id, 'UTF8')), true
     from directory_groups where organization_id = ${noise} limit 10000)`.execute(db);
  await sql`analyze directory_groups`.execute(db);
  await sql`analyze group_extension_values`.execute(db);
});
afterAll(async () => database.close());

interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  "Relation Name"?: string;
  Plans?: PlanNode[];
}

const nodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];

async function plan(query: Compilable): Promise<PlanNode[]> {
  const compiled = query.compile();
  const result = await database.db.executeQuery<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
    CompiledQuery.raw(`explain (format json) ${compiled.sql}`, [...compiled.parameters]),
  );
  const root = result.rows[0]?.["QUERY PLAN"][0]?.Plan;
  if (root === undefined) throw new Error("no plan");
  return nodes(root);
}

const indexesUsed = (all: PlanNode[]) => all.flatMap((n) => (n["Index Name"] === undefined ? [] : [n["Index Name"]]));
const seqScans = (all: PlanNode[]) => all.filter((n) => n["Node Type"] === "Seq Scan");

const offset: GroupPage = { kind: "offset", offset: 0, limit: 100 };
const cases: [string, GroupFilter | undefined, GroupPage, string][] = [
  [
    "displayName eq, offset page",
    { attribute: "displayName", value: "group 42" },
    offset,
    "directory_groups_org_display_name_idx",
  ],
  [
    "externalId eq, offset page",
    { attribute: "externalId", value: "ext-42" },
    offset,
    "directory_groups_org_external_id_key",
  ],
  ["no filter, offset page", undefined, { kind: "offset", offset: 1900, limit: 100 }, "directory_groups_org_id_idx"],
  [
    "no filter, first cursor page",
    undefined,
    { kind: "cursor", afterId: undefined, limit: 101 },
    "directory_groups_org_id_idx",
  ],
  [
    "no filter, deep cursor page",
    undefined,
    { kind: "cursor", afterId: "ffffffff-0000-4000-8000-000000000000", limit: 101 },
    "directory_groups_org_id_idx",
  ],
  [
    "extension attribute eq, offset page",
    { attribute: "extension", key: "urn:acme:group:code", value: "ext-42" },
    offset,
    "group_extension_values_lookup_idx",
  ],
  [
    "displayName eq, cursor page",
    { attribute: "displayName", value: "Group 7" },
    { kind: "cursor", afterId: undefined, limit: 101 },
    "directory_groups_org_display_name_idx",
  ],
];

describe("GET /Groups statements use indexes", () => {
  it.each(cases)("%s", async (_name, filter, page, index) => {
    const used = await plan(pageQuery(database.db, org, filter, page));
    expect(seqScans(used)).toEqual([]);
    expect(indexesUsed(used)).toContain(index);
  });

  it.each([
    ["no filter (the organization's counter)", undefined, "resource_counts_pkey"],
    [
      "displayName eq",
      { attribute: "displayName", value: "group 1" } as const,
      "directory_groups_org_display_name_idx",
    ],
    ["externalId eq", { attribute: "externalId", value: "ext-1" } as const, "directory_groups_org_external_id_key"],
    [
      "extension attribute eq",
      { attribute: "extension", key: "urn:acme:group:code", value: "ext-1" } as const,
      "group_extension_values_lookup_idx",
    ],
  ])("totalResults count, %s", async (_name, filter, index) => {
    const used = await plan(countQuery(database.db, org, filter));
    expect(seqScans(used)).toEqual([]);
    expect(indexesUsed(used)).toContain(index);
  });

  it("a cursor page is a keyset on the id (no OFFSET in the statement)", () => {
    const compiled = pageQuery(database.db, org, undefined, {
      kind: "cursor",
      afterId: uuidv7(),
      limit: 101,
    }).compile();
    expect(compiled.sql).not.toMatch(/offset/i);
    expect(compiled.sql).toMatch(/"id" > \$\d/);
  });
});
