import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { GROUP_SCHEMA, USER_SCHEMA } from "../helpers/constants.js";
import { scim } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * sortBy with cursor pagination (RFC 7644 §3.4.2.3 with RFC 9865 cursors): paging a sorted list a few rows at a time
 * gives every row once, in the sort's order — ties (case-insensitive equal names, equal timestamps) broken by id,
 * rows without a value last in both orders — and the same rows as one offset page; a cursor is bound to its sort.
 */
const { t, c } = useTestApp({ seed: true });

interface Seeded {
  readonly id: string;
  /** The sort keys the server sorts by: case-insensitive strings lower-cased, absent as null. */
  readonly userName: string;
  readonly familyName: string | null;
  readonly lastModified: string;
}

/** Family names with case-insensitive ties and absent ones; timestamps with ties and microsecond differences. */
const FAMILY = [
  "Ng",
  "alvarez",
  "ALVAREZ",
  null,
  "brown",
  "Chen",
  null,
  "chen",
  "Alvarez",
  "ng",
  "diaz",
  null,
  "Brown",
];
const MODIFIED = [
  "2026-01-01 00:00:00.000001+00",
  "2026-01-01 00:00:00.000002+00",
  "2026-01-01 00:00:00.000001+00",
  "2025-12-31 23:59:59.999999+00",
  "2026-01-01 00:00:00.000002+00",
  "2026-01-01 00:00:00.000001+00",
  "2026-02-01 00:00:00+00",
  "2026-01-01 00:00:00.000003+00",
  "2026-01-01 00:00:00.000001+00",
  "2025-12-31 23:59:59.999999+00",
  "2026-02-01 00:00:00+00",
  "2026-01-01 00:00:00.000002+00",
  "2026-01-01 00:00:00.000001+00",
];
/** Group names with case-insensitive ties. */
const GROUPS = ["Ops", "eng", "OPS", "Sales", "ops", "Eng", "admins", "sales", "Zeta", "ENG", "billing"];

let users: Seeded[] = [];
let groups: { id: string; displayName: string; lastModified: string }[] = [];

beforeAll(async () => {
  users = [];
  for (const [n, familyName] of FAMILY.entries()) {
    // Mixed case in userName: it sorts case-insensitively (caseExact false).
    const userName = `${n % 2 === 0 ? "U" : "u"}ser${String((n * 7) % FAMILY.length).padStart(2, "0")}`;
    const res = await scim(t, c, "POST", "/Users", {
      schemas: [USER_SCHEMA],
      userName,
      ...(familyName === null ? {} : { name: { familyName } }),
    });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().id as string;
    const lastModified = MODIFIED[n] as string;
    await sql`update identities set updated_at = ${lastModified}::timestamptz,
      modified_hour = date_bin('1 hour', ${lastModified}::timestamptz, timestamptz '2000-01-01 00:00:00+00')
      where id = ${id}::uuid`.execute(t.db);
    users.push({ id, userName: userName.toLowerCase(), familyName: familyName?.toLowerCase() ?? null, lastModified });
  }
  groups = [];
  for (const [n, displayName] of GROUPS.entries()) {
    const res = await scim(t, c, "POST", "/Groups", { schemas: [GROUP_SCHEMA], displayName });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().id as string;
    const lastModified = MODIFIED[n] as string;
    await sql`update directory_groups set updated_at = ${lastModified}::timestamptz where id = ${id}::uuid`.execute(
      t.db,
    );
    groups.push({ id, displayName, lastModified });
  }
});

type Order = "ascending" | "descending";
type Page = { Resources?: { id: string }[]; nextCursor?: string; itemsPerPage: number };

const get = async (path: string): Promise<Page> => {
  const res = await scim(t, c, "GET", path);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Page;
};

/** Every page of a cursor listing, `count` rows at a time, from the first to the one without nextCursor. */
async function allPages(resource: string, query: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor = "";
  for (let pages = 0; pages < 100; pages++) {
    const body = await get(`/${resource}?${query}&count=${count}&cursor=${encodeURIComponent(cursor)}`);
    ids.push(...(body.Resources ?? []).map((r) => r.id));
    if (body.nextCursor === undefined) return ids;
    expect(body.itemsPerPage).toBe(count);
    cursor = body.nextCursor;
  }
  throw new Error("the listing did not end");
}

/** The order the server must give: values in the direction, absent ones last, ties by id ascending. */
function expectedOrder<T extends { id: string }>(
  rows: readonly T[],
  key: (r: T) => string | null,
  descending: boolean,
) {
  return [...rows]
    .sort((a, b) => {
      const [x, y] = [key(a), key(b)];
      if (x !== y) {
        if (x === null) return 1;
        if (y === null) return -1;
        return (x < y ? -1 : 1) * (descending ? -1 : 1);
      }
      return a.id < b.id ? -1 : 1;
    })
    .map((r) => r.id);
}

const instant = (text: string) => {
  // "2026-01-01 00:00:00.000001+00": compare as fixed-width text in UTC, microseconds included.
  const [date = "", time = ""] = text.replace("+00", "").split(" ");
  const [whole = "", fraction = ""] = time.split(".");
  return `${date}T${whole}.${fraction.padEnd(6, "0")}`;
};

/**
 * Pages `resource` sorted by `sortBy`, `count` rows a page: every one of `rows` once, in the order `key` gives, and the
 * same rows as one offset page.
 */
async function expectSortedPages<T extends { id: string }>(
  resource: "Users" | "Groups",
  rows: readonly T[],
  [sortBy, order, count, key]: [string, Order, number, (row: T) => string | null],
): Promise<void> {
  const query = `sortBy=${sortBy}&sortOrder=${order}`;
  const paged = await allPages(resource, query, count);
  expect(paged).toEqual(expectedOrder(rows, key, order === "descending"));
  expect(new Set(paged).size).toBe(rows.length);
  const offset = await get(`/${resource}?${query}&startIndex=1&count=100`);
  expect(paged).toEqual((offset.Resources ?? []).map((r) => r.id));
}

describe("sortBy with cursors on /Users", () => {
  it.each<[string, Order, number, (u: Seeded) => string | null]>([
    ["userName", "ascending", 2, (u) => u.userName],
    ["userName", "descending", 3, (u) => u.userName],
    ["name.familyName", "ascending", 2, (u) => u.familyName],
    ["name.familyName", "descending", 3, (u) => u.familyName],
    ["meta.lastModified", "ascending", 2, (u) => instant(u.lastModified)],
    ["meta.lastModified", "descending", 4, (u) => instant(u.lastModified)],
  ])("sortBy=%s&sortOrder=%s, %i a page: every user once, in order", (...sort) =>
    expectSortedPages("Users", users, sort),
  );

  it("with a filter, through POST /Users/.search", async () => {
    const filter = 'name.familyName pr and not (name.familyName eq "ng")';
    const expected = expectedOrder(
      users.filter((u) => u.familyName !== null && u.familyName !== "ng"),
      (u) => u.familyName,
      true,
    );
    const ids: string[] = [];
    let cursor = "";
    for (;;) {
      const body = { filter, sortBy: "name.familyName", sortOrder: "descending", count: 2, cursor };
      const res = await scim(t, c, "POST", "/Users/.search", {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
        ...body,
      });
      expect(res.statusCode, res.body).toBe(200);
      const page = res.json() as Page;
      ids.push(...(page.Resources ?? []).map((r) => r.id));
      if (page.nextCursor === undefined) break;
      cursor = page.nextCursor;
    }
    expect(ids).toEqual(expected);
  });
});

describe("sortBy with cursors on /Groups", () => {
  it.each<[string, Order, number, (g: (typeof groups)[number]) => string | null]>([
    ["displayName", "ascending", 2, (g) => g.displayName.toLowerCase()],
    ["displayName", "descending", 3, (g) => g.displayName.toLowerCase()],
    ["meta.lastModified", "ascending", 3, (g) => instant(g.lastModified)],
    ["meta.lastModified", "descending", 2, (g) => instant(g.lastModified)],
  ])("sortBy=%s&sortOrder=%s, %i a page: every group once, in order", (...sort) =>
    expectSortedPages("Groups", groups, sort),
  );

  it("a group renamed between two pages appears once, where its new name sorts, or not at all", async () => {
    const first = await get("/Groups?sortBy=displayName&count=3&cursor=");
    const seen = (first.Resources ?? []).map((r) => r.id);
    const moved = groups.find((g) => g.displayName === "Zeta");
    if (moved === undefined || first.nextCursor === undefined) throw new Error("fixture");
    const renamed = await scim(t, c, "PATCH", `/Groups/${moved.id}`, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "replace", path: "displayName", value: "aardvark" }],
    });
    expect(renamed.statusCode, renamed.body).toBe(204);
    let cursor: string | undefined = first.nextCursor;
    while (cursor !== undefined) {
      const body = await get(`/Groups?sortBy=displayName&count=3&cursor=${encodeURIComponent(cursor)}`);
      seen.push(...(body.Resources ?? []).map((r) => r.id));
      cursor = body.nextCursor;
    }
    // "aardvark" now sorts before the first page's end: it is skipped, and no other group is lost or repeated.
    expect(seen).toEqual(
      expectedOrder(
        groups.filter((g) => g.id !== moved.id),
        (g) => g.displayName.toLowerCase(),
        false,
      ),
    );
  });
});

describe("a sorted cursor is bound to its sort", () => {
  const refused = async (path: string) => {
    const res = await scim(t, c, "GET", path);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ scimType: "invalidCursor" });
  };
  const cursorOf = async (query: string) => {
    const body = await get(`/Users?${query}&count=2&cursor=`);
    if (body.nextCursor === undefined) throw new Error("expected a second page");
    return encodeURIComponent(body.nextCursor);
  };

  it.each([
    ["another attribute", "sortBy=userName", "sortBy=name.familyName"],
    ["the other order", "sortBy=userName", "sortBy=userName&sortOrder=descending"],
    ["no sort", "sortBy=userName", ""],
    ["an unsorted cursor used with a sort", "", "sortBy=userName"],
  ])("%s: 400 invalidCursor", async (_name, issued, used) => {
    const cursor = await cursorOf(issued);
    await refused(`/Users?${used}&count=2&cursor=${cursor}`);
  });

  it("a Users cursor on /Groups with the same sort: 400 invalidCursor", async () => {
    const cursor = await cursorOf("sortBy=meta.lastModified");
    await refused(`/Groups?sortBy=meta.lastModified&count=2&cursor=${cursor}`);
  });
});
