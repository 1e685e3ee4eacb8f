import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { createTestDatabaseAt } from "../helpers/database.js";
import { adminCall, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";
import { GROUP_SCHEMA, USER_SCHEMA } from "../helpers/constants.js";

/**
 * An unfiltered totalResults comes from the organization's counters (0007-list-reads), kept by triggers in the
 * writing transaction: it must equal the rows there are, through concurrent creates, deletes, refused writes, other
 * organizations' writes, the organization's deletion, and rows that existed before the counters did.
 */
const { t } = useTestApp();

const user = (n: string) => ({
  schemas: [USER_SCHEMA],
  userName: `${n}@totals.example`,
});
const group = (n: string) => ({ schemas: [GROUP_SCHEMA], displayName: n });

async function totals(c: SeededClient): Promise<{ users: number; groups: number }> {
  const users = await scim(t, c, "GET", "/Users?count=0");
  const groups = await scim(t, c, "GET", "/Groups?count=0");
  expect(users.statusCode).toBe(200);
  expect(groups.statusCode).toBe(200);
  return { users: users.json().totalResults, groups: groups.json().totalResults };
}

async function rowsOf(orgId: string): Promise<{ users: number; groups: number }> {
  const { rows } = await sql<{ users: number; groups: number }>`select
      (select count(*) from identities where organization_id = ${orgId}) as users,
      (select count(*) from directory_groups where organization_id = ${orgId}) as groups`.execute(t.db);
  return rows[0] ?? { users: -1, groups: -1 };
}

describe("totalResults without a filter", () => {
  it("equals the organization's rows through concurrent creates and deletes", async () => {
    const c = await seedClient(t);
    const other = await seedClient(t);
    const tag = randomBytes(3).toString("hex");
    const created = await Promise.all([
      ...Array.from({ length: 30 }, (_, i) => scim(t, c, "POST", "/Users", user(`u${i}-${tag}`))),
      ...Array.from({ length: 12 }, (_, i) => scim(t, c, "POST", "/Groups", group(`g${i}-${tag}`))),
      ...Array.from({ length: 5 }, (_, i) => scim(t, other, "POST", "/Users", user(`o${i}-${tag}`))),
    ]);
    expect(created.map((r) => r.statusCode)).toEqual(Array(47).fill(201));
    expect(await totals(c)).toEqual({ users: 30, groups: 12 });
    expect(await totals(other)).toEqual({ users: 5, groups: 0 });

    const users = created.slice(0, 7).map((r) => r.json().id as string);
    const groups = created.slice(30, 33).map((r) => r.json().id as string);
    const deleted = await Promise.all([
      ...users.map((id) => scim(t, c, "DELETE", `/Users/${id}`)),
      ...groups.map((id) => scim(t, c, "DELETE", `/Groups/${id}`)),
    ]);
    expect(deleted.map((r) => r.statusCode)).toEqual(Array(10).fill(204));
    expect(await totals(c)).toEqual({ users: 23, groups: 9 });
    expect(await totals(c)).toEqual(await rowsOf(c.organizationId));

    // An offset page carries the same total as a count-only request.
    const page = await scim(t, c, "GET", "/Users?startIndex=21&count=5");
    expect(page.json().totalResults).toBe(23);
    expect(page.json().Resources).toHaveLength(3);
  });

  it("with a filter: the matches, on the page, past the last match and with count=0", async () => {
    const c = await seedClient(t);
    const tag = randomBytes(3).toString("hex");
    expect((await scim(t, c, "POST", "/Users", user(`f-${tag}`))).statusCode).toBe(201);
    expect((await scim(t, c, "POST", "/Users", user(`other-${tag}`))).statusCode).toBe(201);
    const f = encodeURIComponent(`userName eq "F-${tag}@totals.example"`);
    const on = (await scim(t, c, "GET", `/Users?filter=${f}`)).json();
    expect([on.totalResults, on.Resources.length, on.Resources[0]?.userName]).toEqual([
      1,
      1,
      `f-${tag}@totals.example`,
    ]);
    const past = (await scim(t, c, "GET", `/Users?filter=${f}&startIndex=2`)).json();
    expect([past.totalResults, past.Resources]).toEqual([1, []]);
    const none = (await scim(t, c, "GET", `/Users?filter=${f}&count=0`)).json();
    expect(none.totalResults).toBe(1);
    const missing = encodeURIComponent('externalId eq "nobody"');
    const empty = (await scim(t, c, "GET", `/Users?filter=${missing}&startIndex=3`)).json();
    expect([empty.totalResults, empty.Resources]).toEqual([0, []]);
  });

  it("does not move when a create is refused", async () => {
    const c = await seedClient(t);
    expect((await scim(t, c, "POST", "/Users", user("dup-totals"))).statusCode).toBe(201);
    expect((await scim(t, c, "POST", "/Users", user("dup-totals"))).statusCode).toBe(409);
    expect((await scim(t, c, "POST", "/Groups", group("g"))).statusCode).toBe(201);
    expect((await scim(t, c, "POST", "/Groups", { schemas: group("x").schemas })).statusCode).toBe(400);
    expect(await totals(c)).toEqual({ users: 1, groups: 1 });
  });

  it("goes with its organization: deleting one with users and groups leaves no counter", async () => {
    const c = await seedClient(t);
    await scim(t, c, "POST", "/Users", user(`gone-${randomBytes(3).toString("hex")}`));
    await scim(t, c, "POST", "/Groups", group("gone"));
    expect((await adminCall(t, "DELETE", `/organizations/${c.organizationId}`)).statusCode).toBe(200);
    const { rows } = await sql<{ n: number }>`select count(*) as n from resource_counts
      where organization_id = ${c.organizationId}`.execute(t.db);
    expect(rows[0]?.n).toBe(0);
  });
});

describe("the active users counter (the deprovisioning guard's share)", () => {
  const counted = async (orgId: string) => {
    const { rows } = await sql<{ counted: number; actual: number }>`select
        (select coalesce(sum(n), 0)::int from resource_counts
          where organization_id = ${orgId} and resource = 'active_users') as counted,
        (select count(*)::int from identities where organization_id = ${orgId} and active) as actual`.execute(t.db);
    return rows[0];
  };
  const setActive = (c: SeededClient, id: string, active: boolean) =>
    scim(t, c, "PATCH", `/Users/${id}`, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "replace", path: "active", value: active }],
    });

  it("equals the organization's active users through creates, deactivations, PUTs, deletes and concurrency", async () => {
    const c = await seedClient(t);
    const tag = randomBytes(3).toString("hex");
    const ids = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const res = await scim(t, c, "POST", "/Users", { ...user(`a${i}.${tag}`), active: i % 3 !== 0 });
        expect(res.statusCode, res.body).toBe(201);
        return res.json().id as string;
      }),
    );
    expect(await counted(c.organizationId)).toEqual({ counted: 8, actual: 8 });
    // Concurrent flips of the same and of different users, a no-op deactivation, and a PUT that reactivates.
    await Promise.all(ids.map((id, i) => setActive(c, id, i % 2 === 0)));
    await Promise.all(ids.slice(0, 4).map((id) => setActive(c, id, false)));
    const put = await scim(t, c, "PUT", `/Users/${ids[1]}`, { ...user(`a1.${tag}`), active: true });
    expect(put.statusCode, put.body).toBe(200);
    // A refused write changes nothing: a PATCH whose other operation is invalid.
    const refused = await scim(t, c, "PATCH", `/Users/${ids[5]}`, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [
        { op: "replace", path: "active", value: false },
        { op: "replace", path: "userName", value: 42 },
      ],
    });
    expect(refused.statusCode).toBe(400);
    for (const id of ids.slice(6, 9)) expect((await scim(t, c, "DELETE", `/Users/${id}`)).statusCode).toBe(204);
    const after = await counted(c.organizationId);
    expect(after?.counted).toBe(after?.actual);
    expect(after?.actual).toBeGreaterThan(0);
  });

  it("leaves no counter behind when the organization is deleted with its active users", async () => {
    const c = await seedClient(t);
    for (let i = 0; i < 3; i++) await scim(t, c, "POST", "/Users", user(`gone${i}.${randomBytes(3).toString("hex")}`));
    expect((await adminCall(t, "DELETE", `/organizations/${c.organizationId}`)).statusCode).toBe(200);
    expect(await counted(c.organizationId)).toEqual({ counted: 0, actual: 0 });
  });
});

describe("migration 0007", () => {
  it("counts the users and groups that existed before it", async () => {
    const old = await createTestDatabaseAt("0006-identity-version");
    const db = old.db;
    try {
      const org = "0190c000-0000-7000-8000-0000000000aa";
      await sql`insert into organizations (id, name) values (${org}, 'old')`.execute(db);
      await sql`insert into identities (id, organization_id, user_name, scim, created_at, updated_at)
        select gen_random_uuid(), ${org}, 'old' || g, '{}'::jsonb, now(), now() from generate_series(1, 17) g`.execute(
        db,
      );
      await sql`insert into directory_groups (id, organization_id, display_name, created_at, updated_at)
        select gen_random_uuid(), ${org}, 'old' || g, now(), now() from generate_series(1, 4) g`.execute(db);
      await old.migrateToLatest();
      const { rows } = await sql<{ resource: string; n: number }>`select resource, sum(n)::int as n
        from resource_counts where organization_id = ${org} group by resource order by resource`.execute(db);
      expect(rows).toEqual([
        { resource: "active_users", n: 17 },
        { resource: "groups", n: 4 },
        { resource: "users", n: 17 },
      ]);
    } finally {
      await old.close();
    }
  });
});
