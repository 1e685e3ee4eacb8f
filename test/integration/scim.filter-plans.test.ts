import { sql } from "kysely";
import type { Db } from "../../src/storage/database.js";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { quoteIdent } from "../../src/storage/database.js";
import { createTestApp, type TestApp, type TestDatabase } from "../helpers/app.js";
import type { LoggedQuery, QuerySpy } from "../helpers/query-spy.js";
import { type SeededClient, scim, seedClient } from "../helpers/seed.js";

/**
 * The indexed filter forms are served by their indexes on 100 000 users: the test EXPLAINs the exact statements
 * GET /Users and /Groups run (captured from the app's own Kysely), planned as PostgreSQL plans them on analysed
 * tables (sequential scans allowed: the planner must prefer the index on its own).
 */
const USERS = 100_000;
const SEED_CHUNK = 10_000;
const GROUP = "0190d000-0000-7000-8000-000000000001";
let database: TestDatabase;
let logged: QuerySpy;
let t: TestApp;
let c: SeededClient;
let planner: pg.Client;
let someUser: string;

beforeAll(async () => {
  const app = await createTestApp({ queries: true });
  [t, database, logged] = [app, app.database, app.queries];
  c = await seedClient(t);
  // INSERT … SELECT with the row triggers off: the per-row counter upsert of 0007 would update one row 100 000 times.
  // The counter is then set once. The rows go in chunks of their own transactions: the events feed of every other
  // test file on this server waits for the oldest running transaction, and one 100 000-row transaction holds it for
  // as long as the seed takes.
  const seed = (statement: (trx: Db) => Promise<unknown>) =>
    database.db.transaction().execute(async (trx) => {
      await sql`set local session_replication_role = replica`.execute(trx);
      await statement(trx);
    });
  await seed((trx) =>
    sql`insert into directory_groups (id, organization_id, display_name, created_at, updated_at)
      select case when g = 0 then ${GROUP}::uuid else gen_random_uuid() end, ${c.organizationId}::uuid,
        'Group ' || g, now(), now() from generate_series(0, 999) g`.execute(trx),
  );
  for (let from = 1; from <= USERS; from += SEED_CHUNK) {
    const to = Math.min(USERS, from + SEED_CHUNK - 1);
    // Users changed one minute apart, each with a work email in the identifier index, all members of GROUP.
    await seed((trx) =>
      sql`with made as (
          insert into identities (id, organization_id, active, user_name, external_id, employee_number, scim, created_at, updated_at,
            modified_hour)
          select gen_random_uuid(), ${c.organizationId}::uuid, true, 'u' || g || '@example.com', 'x' || g, 'e' || g,
            jsonb_build_object('schemas', jsonb_build_array('urn:ietf:params:scim:schemas:core:2.0:User'),
              'userName', 'u' || g || '@example.com', 'title', 'Title ' || (g % 100),
              'emails', jsonb_build_array(jsonb_build_object('value', 'Mail' || g || '@example.com', 'type', 'work'))),
            now() - interval '1 year', now() - g * interval '1 minute',
            date_bin('1 hour', now() - g * interval '1 minute', timestamptz '2000-01-01 00:00:00+00')
          from generate_series(${from}::int, ${to}::int) g
          returning id, organization_id, scim
        ), identifiers as (
          insert into identity_identifiers (value, kind, identity_id, organization_id)
          select lower(scim -> 'emails' -> 0 ->> 'value'), 'email', id, organization_id from made
        )
        insert into group_user_members (group_id, identity_id, organization_id)
        select ${GROUP}::uuid, id, organization_id from made`.execute(trx),
    );
  }
  await seed((trx) =>
    sql`insert into resource_counts (organization_id, resource, shard, n)
      values (${c.organizationId}::uuid, 'users', 0, ${USERS}), (${c.organizationId}::uuid, 'groups', 0, 1000)
      on conflict (organization_id, resource, shard) do update set n = resource_counts.n + excluded.n`.execute(trx),
  );
  await sql`analyze identities, identity_identifiers, directory_groups, group_user_members`.execute(database.db);
  const { rows } = await sql<{ id: string }>`select id from identities where user_name = 'u4242@example.com'`.execute(
    database.db,
  );
  someUser = rows[0]?.id ?? "";
  planner = new pg.Client({ connectionString: database.url, options: `-c search_path=${quoteIdent(database.schema)}` });
  await planner.connect();
}, 900_000);
afterAll(async () => {
  await planner.end();
  await t.close();
});

/** Every statement a request ran on `table`, EXPLAINed with its own parameters. */
async function plansOf(path: string, filter: string, table: string, extra = ""): Promise<string> {
  const before = logged.queries.length;
  const res = await scim(t, c, "GET", `${path}?filter=${encodeURIComponent(filter)}&count=10${extra}`);
  expect(res.statusCode, res.body).toBe(200);
  const ran: LoggedQuery[] = logged.queries.slice(before).filter((q) => q.sql.includes(table));
  expect(ran.length).toBeGreaterThan(0);
  const plans: string[] = [];
  for (const q of ran) {
    const { rows } = await planner.query(`explain ${q.sql}`, [...q.parameters]);
    plans.push(rows.map((r: Record<string, string>) => r["QUERY PLAN"]).join("\n"));
  }
  return plans.join("\n---\n");
}

const recent = () => new Date(Date.now() - 30 * 60_000).toISOString();

describe(`EXPLAIN of the indexed filter forms on ${USERS} users`, () => {
  it.each<[string, () => string, string[]]>([
    ["userName eq", () => 'userName eq "U4242@example.com"', ["identities_org_user_name_idx"]],
    ["externalId eq", () => 'externalId eq "x4242"', ["identities_org_external_id_idx"]],
    ["employeeNumber eq", () => 'employeeNumber eq "E4242"', ["identities_org_lower_employee_number_idx"]],
    ["emails.value eq", () => 'emails.value eq "mail4242@example.com"', ["identity_identifiers_value_key"]],
    [
      "Entra's emails[type eq work].value eq",
      () => 'emails[type eq "work"].value eq "Mail4242@example.com"',
      ["identity_identifiers_value_key"],
    ],
    ["id eq", () => `id eq "${someUser}"`, ["identities_"]],
    ["meta.lastModified gt", () => `meta.lastModified gt "${recent()}"`, ["identities_org_modified_hour_idx"]],
    [
      "an or of indexed forms",
      () => 'userName eq "u1@example.com" or externalId eq "x2" or emails.value eq "mail3@example.com"',
      ["identities_org_user_name_idx", "identities_org_external_id_idx", "identity_identifiers_value_key"],
    ],
  ])("%s uses its index, no sequential scan of identities", async (_name, filter, indexes) => {
    const plan = await plansOf("/Users", filter(), "identities");
    expect(plan).not.toMatch(/Seq Scan on identities/);
    for (const index of indexes) expect(plan).toContain(index);
  });

  it.each<[string, () => string, string[]]>([
    ["displayName eq", () => 'displayName eq "group 42"', ["directory_groups_org_display_name_idx"]],
    [
      "Entra's id eq … and members eq …",
      () => `id eq "${GROUP}" and members eq "${someUser}"`,
      ["directory_groups_org_id_idx", "group_user_members_", "group_group_members_"],
    ],
    [
      "meta.lastModified gt",
      () => 'meta.lastModified gt "2999-01-01T00:00:00Z"',
      ["directory_groups_org_updated_at_idx"],
    ],
  ])("Groups: %s uses its index", async (_name, filter, indexes) => {
    // As Entra asks: without the member list, which is another statement (a 100 000-member group's).
    const plan = await plansOf("/Groups", filter(), "directory_groups", "&attributes=id");
    expect(plan).not.toMatch(/Seq Scan on (directory_groups|group_user_members)/);
    for (const index of indexes) expect(plan).toContain(index);
  });

  it("a form no index serves is evaluated by PostgreSQL over the stored documents", async () => {
    const plan = await plansOf("/Users", 'title co "itle 4" and not (emails[type eq "home"])', "identities");
    expect(plan).toMatch(/strpos\(lower\(\(scim ->> 'title'::text\)\)/);
    const res = await scim(t, c, "GET", `/Users?filter=${encodeURIComponent('title ew "itle 42"')}&count=1`);
    expect(res.json().totalResults).toBe(USERS / 100);
  });
});
