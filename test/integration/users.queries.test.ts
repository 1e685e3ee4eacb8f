import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestDatabase } from "../helpers/app.js";
import type { QuerySpy } from "../helpers/query-spy.js";
import { type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { ENTERPRISE_SCHEMA, USER_SCHEMA } from "../helpers/constants.js";

/** GET /Users/{id} costs a fixed number of queries whatever the group count (no N+1). */
let database: TestDatabase;
let logged: QuerySpy;
let t: TestApp;
let c: SeededClient;
let other: SeededClient;

beforeAll(async () => {
  const app = await createTestApp({ queries: true });
  [t, database, logged] = [app, app.database, app.queries];
  c = await seedClient(t);
  other = await seedClient(t);
});
afterAll(async () => {
  await t.close();
});

let g = 0;
async function addGroups(orgId: string, userId: string, count: number, names = (i: number) => `G${i}`) {
  const now = new Date();
  const groups = Array.from({ length: count }, (_, i) => ({
    id: `0190b000-0000-7000-8000-${String(++g).padStart(12, "0")}`,
    organization_id: orgId,
    display_name: names(i),
    external_id: null,
    created_at: now,
    updated_at: now,
  }));
  if (count === 0) return groups;
  await database.db.insertInto("directory_groups").values(groups).execute();
  await database.db
    .insertInto("group_user_members")
    .values(groups.map((x) => ({ group_id: x.id, identity_id: userId, organization_id: orgId })))
    .execute();
  return groups;
}

async function queriesFor(path: string): Promise<number> {
  const before = logged.queries.length;
  const res = await scim(t, c, "GET", path);
  expect(res.statusCode).toBe(200);
  return logged.queries.length - before;
}

const createUser = async (body: Record<string, unknown> = {}) =>
  (await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: `q${++g}@example.com`, ...body })).json();

describe("the groups attribute", () => {
  it("lists direct memberships as {value, display, type: direct}, not nested ones", async () => {
    const user = await createUser();
    const [direct] = await addGroups(c.organizationId, user.id, 1, () => "Engineering");
    const now = new Date();
    await database.db
      .insertInto("directory_groups")
      .values({
        id: "0190b000-0000-7000-8000-ffffffffffff",
        organization_id: c.organizationId,
        display_name: "Parent",
        external_id: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await database.db
      .insertInto("group_group_members")
      .values({
        group_id: "0190b000-0000-7000-8000-ffffffffffff",
        member_group_id: direct?.id ?? "",
        organization_id: c.organizationId,
      })
      .execute();
    const body = (await scim(t, c, "GET", `/Users/${user.id}`)).json();
    expect(body.groups).toEqual([{ value: direct?.id, display: "Engineering", type: "direct" }]);
  });

  it("is left out when the projection excludes it, and listed when asked for", async () => {
    const user = await createUser();
    await addGroups(c.organizationId, user.id, 2);
    expect((await scim(t, c, "GET", `/Users/${user.id}?excludedAttributes=groups`)).json().groups).toBeUndefined();
    const only = (await scim(t, c, "GET", `/Users/${user.id}?attributes=groups`)).json();
    expect(Object.keys(only).sort()).toEqual(["groups", "id", "schemas"]);
    expect(only.groups).toHaveLength(2);
  });
});

describe("query counts", () => {
  it("GET /Users/{id} costs 1 query (the client lookup is cached) with 0, 1 or 60 groups", async () => {
    const counts: number[] = [];
    for (const groups of [0, 1, 60]) {
      const user = await createUser();
      await addGroups(c.organizationId, user.id, groups);
      const body = (await scim(t, c, "GET", `/Users/${user.id}`)).json();
      expect(body.groups?.length ?? 0).toBe(groups);
      counts.push(await queriesFor(`/Users/${user.id}`));
    }
    expect(counts).toEqual([1, 1, 1]);
  });

  it("a list page costs the same whatever the page size and the memberships (count and page in one statement)", async () => {
    const small = await queriesFor("/Users?count=1");
    const large = await queriesFor("/Users?count=100");
    expect(large).toBe(small);
    expect(large).toBe(1);
    expect(await queriesFor("/Users?count=0")).toBe(1);
    expect(await queriesFor("/Users?startIndex=5000&count=100")).toBe(1);
    expect(await queriesFor("/Users?count=100&cursor=")).toBe(1);
  });
});

describe("manager displayName", () => {
  it("is resolved in the same query as the user", async () => {
    const boss = await createUser({ displayName: "The Boss" });
    const user = await createUser({ [ENTERPRISE_SCHEMA]: { manager: { value: boss.id } } });
    expect(await queriesFor(`/Users/${user.id}`)).toBe(1);
    expect((await scim(t, c, "GET", `/Users/${user.id}`)).json()[ENTERPRISE_SCHEMA].manager).toEqual({
      value: boss.id,
      displayName: "The Boss",
    });
  });

  it("is not resolved for a manager of another organization", async () => {
    const foreign = (
      await scim(t, other, "POST", "/Users", {
        schemas: [USER_SCHEMA],
        userName: "foreign-boss@example.com",
        displayName: "F",
      })
    ).json();
    const user = await createUser({ [ENTERPRISE_SCHEMA]: { manager: { value: foreign.id } } });
    expect((await scim(t, c, "GET", `/Users/${user.id}`)).json()[ENTERPRISE_SCHEMA].manager).toEqual({
      value: foreign.id,
    });
  });
});
