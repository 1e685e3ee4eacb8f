import { beforeAll, describe, expect, it } from "vitest";
import { LIST_RESPONSE } from "../helpers/constants.js";
import { type FilterDirectory, type FilterUser, seedFilterDirectory } from "../helpers/filter-directory.js";
import { scim } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

/** sortBy/sortOrder (RFC 7644 §3.4.2.3) with exact offsets, and POST …/.search (§3.4.3). */
const { t, c } = useTestApp({ seed: true });
let d: FilterDirectory;
const SEARCH = "urn:ietf:params:scim:api:messages:2.0:SearchRequest";

beforeAll(async () => {
  d = await seedFilterDirectory(t, c);
});

const idsOf = (body: { Resources?: { id: string }[] }) => (body.Resources ?? []).map((r) => r.id);
const users = (...keys: FilterUser[]) => keys.map((k) => d.users[k]);
const list = async (path: string, query: string) => {
  const res = await scim(t, c, "GET", `${path}?${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

describe("sortBy on /Users", () => {
  it.each<[string, FilterUser[]]>([
    ["sortBy=userName", ["ada", "bjensen", "jsmith", "zed"]],
    ["sortBy=userName&sortOrder=descending", ["zed", "jsmith", "bjensen", "ada"]],
    // Absent values sort last in either order.
    ["sortBy=name.familyName", ["bjensen", "ada", "jsmith", "zed"]],
    ["sortBy=name.familyName&sortOrder=DESCENDING", ["jsmith", "ada", "bjensen", "zed"]],
    // A multi-valued attribute sorts by its primary value, else its first; case-insensitively.
    ["sortBy=emails", ["bjensen", "jsmith", "zed", "ada"]],
    ["sortBy=externalId", ["ada", "bjensen", "jsmith", "zed"]],
  ])("%s", async (query, expected) => {
    expect(idsOf(await list("/Users", query))).toEqual(users(...expected));
  });

  it("equal values (Engineer, engineer) are ordered by id; absent ones come last", async () => {
    const ids = idsOf(await list("/Users", "sortBy=title&sortOrder=descending"));
    expect(ids).toEqual([d.users.bjensen, ...users("jsmith", "ada").sort(), d.users.zed]);
  });

  it("offsets stay exact in a sort, ties broken by id, with a filter", async () => {
    const all = idsOf(await list("/Users", "sortBy=title&count=10"));
    const pages = [];
    for (const startIndex of [1, 2, 3, 4]) {
      const body = await list("/Users", `sortBy=title&startIndex=${startIndex}&count=1`);
      expect(body.totalResults).toBe(4);
      pages.push(...idsOf(body));
    }
    expect(pages).toEqual(all);
    const filtered = await list(
      "/Users",
      `filter=${encodeURIComponent('userName co "example.com"')}&sortBy=userName&startIndex=2&count=1`,
    );
    expect(filtered).toMatchObject({ totalResults: 3, startIndex: 2, itemsPerPage: 1 });
    expect(idsOf(filtered)).toEqual(users("bjensen"));
  });

  it("sortBy with a cursor pages in the sort (scim.sort-cursor.test.ts pages it through)", async () => {
    const body = await list("/Users", "sortBy=userName&sortOrder=descending&cursor=&count=2");
    expect(idsOf(body)).toEqual(users("zed", "jsmith"));
    expect(typeof body.nextCursor).toBe("string");
  });

  it.each(["sortBy=password", "sortBy=name", "sortBy=nope", "sortBy=userName&sortOrder=sideways"])(
    "%s is 400 invalidValue",
    async (query) => {
      const res = await scim(t, c, "GET", `/Users?${query}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().scimType).toBe("invalidValue");
    },
  );
});

describe("sortBy on /Groups", () => {
  it("sorts by displayName either way; by members is 400 invalidValue", async () => {
    const up = await list("/Groups", "sortBy=displayName&excludedAttributes=members");
    expect(idsOf(up)).toEqual([d.groups.engineering, d.groups.night, d.groups.tours]);
    const down = await list("/Groups", "sortBy=displayName&sortOrder=descending&startIndex=2&count=1");
    expect(idsOf(down)).toEqual([d.groups.night]);
    expect(down.totalResults).toBe(3);
    const members = await scim(t, c, "GET", "/Groups?sortBy=members");
    expect(members.statusCode).toBe(400);
    expect(members.json().scimType).toBe("invalidValue");
  });
});

describe("POST .search", () => {
  const search = (path: string, body: Record<string, unknown>) =>
    scim(t, c, "POST", path, { schemas: [SEARCH], ...body });

  it("/Users/.search answers what the same GET answers", async () => {
    const body = { filter: "title pr", sortBy: "userName", sortOrder: "descending", startIndex: 1, count: 2 };
    const res = await search("/Users/.search", { ...body, attributes: ["userName"] });
    expect(res.statusCode, res.body).toBe(200);
    const get = await list(
      "/Users",
      "filter=title%20pr&sortBy=userName&sortOrder=descending&count=2&attributes=userName",
    );
    expect(res.json()).toEqual(get);
    expect(res.json()).toMatchObject({ schemas: [LIST_RESPONSE], totalResults: 3 });
    expect(Object.keys(res.json().Resources[0]).sort()).toEqual(["id", "schemas", "userName"]);
  });

  it("/Users/.search pages by cursor too", async () => {
    const first = (await search("/Users/.search", { cursor: "", count: 3 })).json();
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = (await search("/Users/.search", { cursor: first.nextCursor, count: 3 })).json();
    expect([...idsOf(first), ...idsOf(second)].sort()).toEqual(Object.values(d.users).sort());
  });

  it("/Groups/.search filters and projects", async () => {
    const res = await search("/Groups/.search", {
      filter: `members eq "${d.users.ada}"`,
      excludedAttributes: ["members"],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(idsOf(res.json())).toEqual([d.groups.engineering]);
    expect(res.json().Resources[0].members).toBeUndefined();
  });

  it("/.search lists users then groups as one offset-paged list", async () => {
    const all = (await search("/.search", { filter: "externalId pr" })).json();
    expect(all.totalResults).toBe(5);
    expect(all.Resources.map((r: { schemas: string[] }) => r.schemas[0]?.split(":").pop())).toEqual([
      "User",
      "User",
      "User",
      "User",
      "Group",
    ]);
    const tail = (await search("/.search", { filter: "externalId pr", startIndex: 4, count: 2 })).json();
    expect(tail).toMatchObject({ totalResults: 5, startIndex: 4, itemsPerPage: 2 });
    expect(idsOf(tail)).toEqual([all.Resources[3].id, d.groups.engineering]);
    // A filter only one type can take matches none of the other.
    const onlyUsers = (await search("/.search", { filter: 'userName sw "a"' })).json();
    expect(idsOf(onlyUsers)).toEqual([d.users.ada]);
  });

  it.each([
    ["/Users/.search", { schemas: ["urn:wrong"] }, "invalidSyntax"],
    ["/Users/.search", { schemas: [SEARCH], startIndex: "one" }, "invalidSyntax"],
    ["/Users/.search", { schemas: [SEARCH], filtre: "x" }, "invalidSyntax"],
    ["/Groups/.search", { schemas: [SEARCH], filter: "displayName zz 1" }, "invalidFilter"],
    ["/.search", { schemas: [SEARCH], filter: "nothing eq 1" }, "invalidFilter"],
    ["/.search", { schemas: [SEARCH], cursor: "" }, "invalidValue"],
  ])("%s %j is 400 %s", async (path, body, scimType) => {
    const res = await scim(t, c, "POST", path, body);
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe(scimType);
  });

  it("other methods on .search are 405", async () => {
    expect((await scim(t, c, "PUT", "/.search", {})).statusCode).toBe(405);
    expect((await scim(t, c, "DELETE", "/Users/.search")).statusCode).toBe(405);
  });
});
