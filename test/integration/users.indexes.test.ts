import { sql } from "kysely";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { genericPlanOf, type LoggedQuery, openExplainer, planOf } from "../helpers/query-spy.js";
import { scim, seedClient } from "../helpers/seed.js";
import { USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * Every supported filter and both paginations are served by an index. The test EXPLAINs the exact
 * statements GET /Users runs (captured from the app's own Kysely), with `enable_seqscan = off` so a plan without a
 * usable index would show a Seq Scan, on 5000 analysed users.
 */
const GROUP = "0190c000-0000-7000-8000-000000000001";
const { t, c, database } = useTestApp({ queries: true, seed: true });
let explainer: pg.Client;

beforeAll(async () => {
  await sql`insert into identities (id, organization_id, active, user_name, external_id, employee_number, scim, created_at, updated_at, modified_hour)
    select gen_random_uuid(), ${c.organizationId}::uuid, true, 'bulk' || g || '@example.com', 'x' || g, 'e' || g,
      jsonb_build_object('schemas', jsonb_build_array('urn:ietf:params:scim:schemas:core:2.0:User'),
        'userName', 'bulk' || g || '@example.com', 'active', true), now(), now(), date_bin('1 hour', now(), timestamptz '2000-01-01 00:00:00+00')
    from generate_series(1, 5000) g`.execute(database.db);
  await sql`insert into directory_groups (id, organization_id, display_name, created_at, updated_at)
    values (${GROUP}::uuid, ${c.organizationId}::uuid, 'Bulk', now(), now())`.execute(database.db);
  await sql`insert into group_user_members (group_id, identity_id, organization_id)
    select ${GROUP}::uuid, id, organization_id from identities where user_name like 'bulk1%'`.execute(database.db);
  // A second, small organization: the generic plans must suit the large one and the small one alike.
  const small = await seedClient(t);
  await scim(t, small, "POST", "/Users", {
    schemas: [USER_SCHEMA],
    userName: "small@example.com",
  });
  await sql`analyze`.execute(database.db);
  explainer = await openExplainer(database);
});
afterAll(async () => {
  await explainer.end();
});

/** The identity queries a GET /Users request ran, each with its plan as text. */
async function plansOf(query: string): Promise<{ sql: string; plan: string }[]> {
  const before = t.queries.queries.length;
  const res = await scim(t, c, "GET", `/Users?${query}`);
  expect(res.statusCode).toBe(200);
  const ran: LoggedQuery[] = t.queries.queries.slice(before).filter((q) => /\bidentities\b/.test(q.sql));
  expect(ran.length).toBeGreaterThan(0);
  const out: { sql: string; plan: string }[] = [];
  for (const q of ran) {
    out.push({ sql: q.sql, plan: await planOf(explainer, q) });
  }
  return out;
}

/** The same, planned as the reads pool plans them: generically, once (DatabaseOptions.genericPlans). */
async function genericPlansOf(query: string): Promise<string[]> {
  const before = t.queries.queries.length;
  expect((await scim(t, c, "GET", `/Users?${query}`)).statusCode).toBe(200);
  const ran = t.queries.queries.slice(before).filter((q) => /\bidentities\b/.test(q.sql));
  expect(ran.length).toBeGreaterThan(0);
  const plans: string[] = [];
  for (const q of ran) plans.push(await genericPlanOf(explainer, q));
  return plans;
}

const cursorOf = async (query: string): Promise<string> =>
  (await scim(t, c, "GET", `/Users?${query}&cursor=`)).json().nextCursor as string;

const filter = (f: string) => `filter=${encodeURIComponent(f)}`;

describe("EXPLAIN of GET /Users", () => {
  it.each([
    ["offset page, no filter", () => "startIndex=4901&count=100", "identities_org_id_idx"],
    ["userName eq", () => filter('userName eq "BULK42@example.com"'), "identities_org_user_name_idx"],
    ["externalId eq", () => filter('externalId eq "x42"'), "identities_org_external_id_idx"],
    ["employeeNumber eq", () => filter('employeeNumber eq "e42"'), "identities_org_lower_employee_number_idx"],
    ["groups.value eq", () => filter(`groups.value eq "${GROUP}"`), "group_user_members_pkey"],
  ])("%s uses %s and no sequential scan", async (_name, query, index) => {
    const plans = await plansOf(query());
    for (const { plan } of plans) expect(plan).not.toMatch(/Seq Scan/);
    expect(plans.map((p) => p.plan).join("\n")).toContain(index);
  });

  it.each([
    ["offset page, no filter", () => "startIndex=4901&count=100", "identities_org_id_idx"],
    ["first offset page", () => "startIndex=1&count=100", "identities_org_id_idx"],
    ["userName eq", () => filter('userName eq "BULK42@example.com"'), "identities_org_user_name_idx"],
    ["groups.value eq", () => filter(`groups.value eq "${GROUP}"`), "group_user_members_pkey"],
    ["first cursor page", () => "count=100&cursor=", "identities_org_id_idx"],
  ])(
    "%s planned generically (the reads pool) still uses %s, with a small organization beside",
    async (_n, query, index) => {
      const plans = await genericPlansOf(query());
      for (const plan of plans) expect(plan).not.toMatch(/Seq Scan/);
      expect(plans.join("\n")).toContain(index);
    },
  );

  it("an unfiltered total reads the organization's counter, not its users", async () => {
    const plans = await plansOf("startIndex=1&count=10");
    expect(plans).toHaveLength(1);
    expect(plans[0]?.plan).toContain("resource_counts_pkey");
    expect(plans[0]?.plan).not.toMatch(/Aggregate[^\n]*\n[^\n]*identities/);
  });

  it("a cursor page is a keyset scan of the id index, never OFFSET", async () => {
    const cursor = await cursorOf("count=100");
    const plans = await plansOf(`count=100&cursor=${cursor}`);
    expect(plans).toHaveLength(1);
    const [page] = plans;
    expect(page?.sql).not.toMatch(/offset/i);
    expect(page?.plan).toContain("identities_org_id_idx");
    // The page (CTE p) is a Limit directly over the ordered index scan: no Sort of the organization's users.
    const lines = (page?.plan ?? "").split("\n");
    const limit = lines.findIndex((line) => /-> {2}Limit/.test(line));
    expect(limit).toBeGreaterThanOrEqual(0);
    expect(lines[limit + 1]).toMatch(/-> {2}Index Scan using identities_org_id_idx on identities i/);
    expect(page?.plan).not.toMatch(/Seq Scan/);
  });

  it("a filtered cursor page uses the filter's index", async () => {
    const query = filter(`groups.value eq "${GROUP}"`);
    const cursor = await cursorOf(`${query}&count=10`);
    const plans = await plansOf(`${query}&count=10&cursor=${cursor}`);
    expect(plans[0]?.plan).toContain("group_user_members_pkey");
    expect(plans[0]?.plan).not.toMatch(/Seq Scan/);
  });
});
