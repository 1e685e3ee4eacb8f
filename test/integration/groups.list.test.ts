import { beforeAll, describe, expect, it } from "vitest";
import { createGroup, type ScimMember } from "../helpers/groups.js";
import { insertIdentity } from "../helpers/identities.js";
import { scim, seedClient } from "../helpers/seed.js";
import { LIST_RESPONSE } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/** GET /Groups: filters, offset and cursor pagination, projection. */
const { t, c } = useTestApp({ seed: true });
let ids: string[];
let member: string;

beforeAll(async () => {
  member = await insertIdentity(t.db, c.organizationId, "listed@example.com");
  const names = ["Engineering", "Sales", "Support", "Marketing", "Finance"];
  ids = [];
  for (const [i, name] of names.entries()) {
    const extra = i === 0 ? { externalId: "ext-Eng", members: [{ value: member }] } : { externalId: `ext-${i}` };
    ids.push((await createGroup(t, c, name, extra)).id);
  }
  ids.sort();
  // Noise in another organization that must never show up.
  const other = await seedClient(t);
  await createGroup(t, other, "Engineering", { externalId: "ext-Eng" });
});

const list = (query: string) => scim(t, c, "GET", `/Groups${query === "" ? "" : `?${query}`}`);
const filter = (f: string) => `filter=${encodeURIComponent(f)}`;
const idsOf = (body: { Resources?: { id: string }[] }) => (body.Resources ?? []).map((r) => r.id);

describe("filters", () => {
  it.each([
    ['displayName eq "Engineering"', 1],
    ['displayName eq "engineering"', 1],
    ['DISPLAYNAME eq "ENGINEERING"', 1],
    ['urn:ietf:params:scim:schemas:core:2.0:Group:displayName eq "Sales"', 1],
    ['externalId eq "ext-Eng"', 1],
    ['externalId eq "ext-eng"', 0],
    ['displayName eq "Nobody"', 0],
  ])("%s matches %i", async (f, n) => {
    const res = await list(filter(f));
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.totalResults).toBe(n);
    expect(body.Resources).toHaveLength(n);
  });

  it("returns members on filtered results unless excluded (Entra asks with excludedAttributes=members)", async () => {
    const full = (await list(filter('displayName eq "Engineering"'))).json();
    expect((full.Resources[0].members as ScimMember[]).map((m) => m.value)).toEqual([member]);
    const lean = (await list(`${filter('displayName eq "Engineering"')}&excludedAttributes=members`)).json();
    expect(lean.Resources[0]).not.toHaveProperty("members");
    expect(lean.Resources[0].displayName).toBe("Engineering");
  });

  it.each([
    'members.value eq "x"',
    'members.display eq "Eng"',
    'displayName eq "a" or',
    'userName eq "x"',
    'urn:ietf:params:scim:schemas:core:2.0:User:displayName eq "x"',
    "displayName eq",
  ])("refuses %s with 400 invalidFilter", async (f) => {
    const res = await list(filter(f));
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidFilter");
  });
});

describe("offset pagination", () => {
  it("pages in id order without repeats or gaps", async () => {
    const pages = [];
    for (const startIndex of [1, 3, 5]) {
      const body = (await list(`startIndex=${startIndex}&count=2`)).json();
      expect(body).toMatchObject({ schemas: [LIST_RESPONSE], totalResults: 5, startIndex });
      expect(body.itemsPerPage).toBe(body.Resources.length);
      pages.push(...idsOf(body));
    }
    expect(pages).toEqual(ids);
  });

  it("defaults: startIndex 1, everything (below 100)", async () => {
    const body = (await list("")).json();
    expect(body).toMatchObject({ totalResults: 5, startIndex: 1, itemsPerPage: 5 });
    expect(idsOf(body)).toEqual(ids);
  });

  it("count=0 gives totalResults and no Resources; startIndex below 1 counts as 1", async () => {
    const body = (await list("count=0")).json();
    expect(body).toEqual({ schemas: [LIST_RESPONSE], totalResults: 5, startIndex: 1, itemsPerPage: 0 });
    expect(idsOf((await list("startIndex=-4&count=1")).json())).toEqual([ids[0]]);
  });

  it("a page past the end is empty but still counts", async () => {
    const body = (await list("startIndex=50")).json();
    expect(body).toMatchObject({ totalResults: 5, itemsPerPage: 0, Resources: [] });
  });

  it.each(["startIndex=5001", "count=1001"])("%s is 400 tooMany", async (q) => {
    const res = await list(q);
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("tooMany");
  });
});

describe("cursor pagination (RFC 9865)", () => {
  it("walks every group once, in id order; nextCursor on every page but the last; no totalResults", async () => {
    const seen: string[] = [];
    let query = "cursor=&count=2";
    let pages = 0;
    for (;;) {
      const body = (await list(query)).json();
      pages += 1;
      expect(body).not.toHaveProperty("totalResults");
      seen.push(...idsOf(body));
      if (body.nextCursor === undefined) break;
      query = `cursor=${encodeURIComponent(body.nextCursor)}&count=2`;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(ids);
  });

  it("a cursor with a filter pages within the filter", async () => {
    const body = (await list(`cursor=&count=1&${filter('displayName eq "sales"')}`)).json();
    expect(body.Resources.map((r: { displayName: string }) => r.displayName)).toEqual(["Sales"]);
    expect(body.nextCursor).toBeUndefined();
  });

  it("an expired cursor is 400 expiredCursor", async () => {
    const first = (await list("cursor=&count=2")).json();
    t.clock.advance(3601 * 1000);
    const res = await list(`cursor=${encodeURIComponent(first.nextCursor)}&count=2`);
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("expiredCursor");
  });

  it("a cursor still valid just before expiry continues", async () => {
    const first = (await list("cursor=&count=2")).json();
    t.clock.advance(3599 * 1000);
    const res = await list(`cursor=${encodeURIComponent(first.nextCursor)}&count=2`);
    expect(res.statusCode).toBe(200);
    expect(idsOf(res.json())).toEqual(ids.slice(2, 4));
  });

  it.each([
    [
      "tampered",
      (cursor: string) => `cursor=${cursor.slice(0, 10)}${cursor[10] === "A" ? "B" : "A"}${cursor.slice(11)}&count=2`,
    ],
    ["garbage", () => "cursor=not-a-cursor&count=2"],
    ["reused with another count", (cursor: string) => `cursor=${encodeURIComponent(cursor)}&count=3`],
    [
      "reused with a filter",
      (cursor: string) => `cursor=${encodeURIComponent(cursor)}&count=2&${filter('externalId eq "x"')}`,
    ],
  ])("a %s cursor is 400 invalidCursor", async (_name, build) => {
    const first = (await list("cursor=&count=2")).json();
    const res = await list(build(first.nextCursor as string));
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidCursor");
  });

  it("a cursor of the Groups list is not a cursor of another client", async () => {
    const first = (await list("cursor=&count=2")).json();
    const other = await seedClient(t);
    const res = await scim(t, other, "GET", `/Groups?cursor=${encodeURIComponent(first.nextCursor)}&count=2`);
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidCursor");
  });

  it("cursor with startIndex is 400 invalidValue", async () => {
    const res = await list("cursor=&startIndex=1");
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidValue");
  });
});
