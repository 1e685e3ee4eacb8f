import { beforeAll, describe, expect, it } from "vitest";
import { scim } from "../helpers/seed.js";
import { ENTERPRISE_SCHEMA, LIST_RESPONSE, USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/** GET /Users: filters, offset and cursor pagination, projection. */
const GROUP_A = "0190a000-0000-7000-8000-0000000000aa";
const GROUP_B = "0190a000-0000-7000-8000-0000000000bb";
const { t, c } = useTestApp({ seed: true });
const ids: string[] = [];

beforeAll(async () => {
  for (let i = 0; i < 7; i++) {
    const res = await scim(t, c, "POST", "/Users", {
      schemas: [USER_SCHEMA, ENTERPRISE_SCHEMA],
      userName: `List${i}@Example.com`,
      externalId: `Ext-${i}`,
      [ENTERPRISE_SCHEMA]: { employeeNumber: `E${i % 3}` },
    });
    ids.push(res.json().id);
  }
  ids.sort();
  const now = new Date();
  const group = (id: string, name: string) => ({
    id,
    organization_id: c.organizationId,
    display_name: name,
    external_id: null,
    created_at: now,
    updated_at: now,
  });
  await t.db
    .insertInto("directory_groups")
    .values([group(GROUP_A, "A"), group(GROUP_B, "B")])
    .execute();
  const member = (groupId: string, identityId: string | undefined) => ({
    group_id: groupId,
    identity_id: identityId ?? "",
    organization_id: c.organizationId,
  });
  await t.db
    .insertInto("group_user_members")
    .values([member(GROUP_A, ids[1]), member(GROUP_A, ids[4]), member(GROUP_B, ids[5])])
    .execute();
  // B is nested in A: B's members are not direct members of A.
  await t.db
    .insertInto("group_group_members")
    .values({ group_id: GROUP_A, member_group_id: GROUP_B, organization_id: c.organizationId })
    .execute();
});

const list = (query: string) => scim(t, c, "GET", `/Users${query === "" ? "" : `?${query}`}`);
const filter = (f: string, extra = "") => list(`filter=${encodeURIComponent(f)}${extra}`);
const idsOf = (body: { Resources?: { id: string }[] }) => (body.Resources ?? []).map((r) => r.id);

describe("offset pagination", () => {
  it("lists every user by default, ordered by id, with totalResults, startIndex and itemsPerPage", async () => {
    const res = await list("");
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ schemas: [LIST_RESPONSE], totalResults: 7, startIndex: 1, itemsPerPage: 7 });
    expect(idsOf(res.json())).toEqual(ids);
    expect(res.json().Resources[0].meta.resourceType).toBe("User");
  });

  it("pages with startIndex and count, never repeating or skipping", async () => {
    const seen: string[] = [];
    for (let start = 1; start <= 7; start += 3) {
      const body = (await list(`startIndex=${start}&count=3`)).json();
      expect(body).toMatchObject({ totalResults: 7, startIndex: start });
      seen.push(...idsOf(body));
    }
    expect(seen).toEqual(ids);
  });

  it("count=0 answers totalResults without Resources", async () => {
    const body = (await list("count=0")).json();
    expect(body).toEqual({ schemas: [LIST_RESPONSE], totalResults: 7, startIndex: 1, itemsPerPage: 0 });
  });

  it("treats startIndex below 1 as 1 and a negative count as 0", async () => {
    expect(idsOf((await list("startIndex=-4&count=2")).json())).toEqual(ids.slice(0, 2));
    expect((await list("count=-1")).json().Resources).toBeUndefined();
  });

  it.each(["startIndex=5001", "count=1001"])("%s is 400 tooMany", async (query) => {
    const res = await list(query);
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("tooMany");
  });
});

describe("filters", () => {
  it("userName eq matches case-insensitively, also URN-qualified", async () => {
    const body = (await filter('userName eq "list3@EXAMPLE.com"')).json();
    expect(body.totalResults).toBe(1);
    expect(body.Resources[0].userName).toBe("List3@Example.com");
    const urn = (await filter(`${USER_SCHEMA}:userName eq "LIST3@example.com"`)).json();
    expect(urn.totalResults).toBe(1);
  });

  it("externalId eq is case-sensitive", async () => {
    expect((await filter('externalId eq "Ext-2"')).json().totalResults).toBe(1);
    expect((await filter('externalId eq "ext-2"')).json().totalResults).toBe(0);
  });

  it("employeeNumber eq, plain or URN-qualified", async () => {
    expect((await filter('employeeNumber eq "E1"')).json().totalResults).toBe(2);
    expect((await filter(`${ENTERPRISE_SCHEMA}:employeeNumber eq "E0"`)).json().totalResults).toBe(3);
  });

  it("groups.value eq lists direct members only", async () => {
    const body = (await filter(`groups.value eq "${GROUP_A}"`)).json();
    expect(idsOf(body)).toEqual([ids[1], ids[4]].sort());
    expect((await filter(`groups.value eq "${GROUP_B}"`)).json().totalResults).toBe(1);
  });

  it("groups.value with a value that is not a UUID is 400 invalidFilter", async () => {
    const res = await filter('groups.value eq "not-a-uuid"');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      scimType: "invalidFilter",
      detail: "the filter value for groups.value must be a valid UUID",
    });
  });

  it.each(['password eq "x"', 'userName xx "List"', 'userName eq "a" and', "userName eq", "active gt true"])(
    "%s is 400 invalidFilter",
    async (f) => {
      const res = await filter(f);
      expect(res.statusCode).toBe(400);
      expect(res.json().scimType).toBe("invalidFilter");
    },
  );

  it("a filter that matches nothing is 200 with totalResults 0 (Entra's test connection)", async () => {
    const body = (await filter('userName eq "9f0e7a52-0000-4000-8000-000000000000"', "&startIndex=1&count=100")).json();
    expect(body).toEqual({ schemas: [LIST_RESPONSE], totalResults: 0, startIndex: 1, itemsPerPage: 0, Resources: [] });
  });

  it("filters with cursor pagination too", async () => {
    const body = (await filter('employeeNumber eq "E0"', "&cursor=&count=2")).json();
    expect(body.itemsPerPage).toBe(2);
    const next = (await filter('employeeNumber eq "E0"', `&count=2&cursor=${body.nextCursor}`)).json();
    expect([...idsOf(body), ...idsOf(next)]).toHaveLength(3);
    expect(next.nextCursor).toBeUndefined();
  });
});

describe("cursor pagination (RFC 9865)", () => {
  async function walk(count: number): Promise<{ pages: Record<string, unknown>[]; seen: string[] }> {
    const pages: Record<string, unknown>[] = [];
    const seen: string[] = [];
    let cursor = "";
    for (let i = 0; i < 10; i++) {
      const body = (await list(`count=${count}&cursor=${encodeURIComponent(cursor)}`)).json();
      pages.push(body);
      seen.push(...idsOf(body));
      if (body.nextCursor === undefined) break;
      cursor = body.nextCursor;
    }
    return { pages, seen };
  }

  it("starts with an empty cursor and follows nextCursor to the last page, without totalResults", async () => {
    const { pages, seen } = await walk(3);
    expect(seen).toEqual(ids);
    expect(pages).toHaveLength(3);
    for (const page of pages) expect(page.totalResults).toBeUndefined();
    expect(pages[2]?.nextCursor).toBeUndefined();
    expect(pages[0]?.itemsPerPage).toBe(3);
  });

  it("an expired cursor is 400 expiredCursor", async () => {
    const first = (await list("count=2&cursor=")).json();
    t.clock.advance(3601 * 1000);
    const res = await list(`count=2&cursor=${first.nextCursor}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("expiredCursor");
  });

  it("a tampered cursor, or one reused with another query, is 400 invalidCursor", async () => {
    const first = (await list("count=2&cursor=")).json();
    const cursor: string = first.nextCursor;
    const tampered = `${cursor.slice(0, 10)}${cursor[10] === "A" ? "B" : "A"}${cursor.slice(11)}`;
    const bad = await list(`count=2&cursor=${tampered}`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().scimType).toBe("invalidCursor");
    const other = await list(`count=3&cursor=${cursor}`);
    expect(other.json().scimType).toBe("invalidCursor");
  });

  it("startIndex together with cursor is 400 invalidValue", async () => {
    const res = await list("startIndex=1&cursor=");
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidValue");
  });

  it("count=0 answers no Resources and no nextCursor", async () => {
    const body = (await list("count=0&cursor=")).json();
    expect(body).toEqual({ schemas: [LIST_RESPONSE], itemsPerPage: 0 });
  });
});

describe("projection and groups on list pages", () => {
  it("attributes keeps id, schemas and what is listed", async () => {
    const body = (await list("attributes=userName&count=2")).json();
    expect(body.Resources[0].id).toBe(ids[0]);
    expect(body.Resources[0].schemas).toEqual([USER_SCHEMA, ENTERPRISE_SCHEMA]);
    expect(body.Resources[0].userName).toMatch(/^List\d@Example\.com$/);
    expect(Object.keys(body.Resources[1]).sort()).toEqual(["id", "schemas", "userName"]);
  });

  it("excludedAttributes drops what is listed", async () => {
    const body = (await list(`excludedAttributes=externalId,${ENTERPRISE_SCHEMA}&count=1`)).json();
    expect(body.Resources[0].externalId).toBeUndefined();
    expect(body.Resources[0][ENTERPRISE_SCHEMA]).toBeUndefined();
    expect(body.Resources[0].userName).toBeDefined();
  });

  it("both at once is 400", async () => {
    expect((await list("attributes=userName&excludedAttributes=emails")).statusCode).toBe(400);
  });

  it("shows each user's direct groups on the page", async () => {
    const body = (await list("")).json();
    const byId = new Map<string, { groups?: unknown }>(body.Resources.map((r: { id: string }) => [r.id, r]));
    expect(byId.get(ids[1] ?? "")?.groups).toEqual([{ value: GROUP_A, display: "A", type: "direct" }]);
    expect(byId.get(ids[5] ?? "")?.groups).toEqual([{ value: GROUP_B, display: "B", type: "direct" }]);
    expect(byId.get(ids[0] ?? "")?.groups).toBeUndefined();
  });
});
