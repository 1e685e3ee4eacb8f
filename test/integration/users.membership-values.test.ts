import { beforeAll, describe, expect, it } from "vitest";
import { createGroup } from "../helpers/groups.js";
import { adminCall, scim } from "../helpers/seed.js";
import { USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * A user's memberships come from the directory as values (group id and displayName per row), whatever a group's name
 * holds: the SCIM `groups` attribute (every read and write path) and the admin browser show them as named, in
 * displayName order.
 */
const { t, c } = useTestApp({ seed: true });

/** Names that PostgreSQL's array text quotes or escapes, and one JSON must escape. */
const NAMES = ["NULL", "a,b", "{braces}", 'quote " and \\ backslash', " spaced ", "zürich\u2028line"];
let user: string;
let userName: string;
let expected: { value: string; display: string; type: "direct" }[];

beforeAll(async () => {
  userName = `member-values-${Date.now()}@example.com`;
  const res = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName });
  expect(res.statusCode, res.body).toBe(201);
  user = res.json().id as string;
  const groups = [];
  for (const name of NAMES) groups.push(await createGroup(t, c, name, { members: [{ value: user }] }));
  // PostgreSQL orders them by the database's collation: compared as a set here, the order between answers below.
  expected = groups.map((g, i) => ({ value: g.id, display: NAMES[i] as string, type: "direct" as const }));
});

const sortedByValue = (xs: readonly { value: string }[]) => [...xs].sort((a, b) => (a.value < b.value ? -1 : 1));

describe("memberships as values", () => {
  it("GET /Users/{id}, with and without a projection, shows every name as it is", async () => {
    for (const query of ["", "?attributes=groups,userName", "?excludedAttributes=noSuchAttribute"]) {
      const res = await scim(t, c, "GET", `/Users/${user}${query}`);
      expect(res.statusCode, res.body).toBe(200);
      const groups = res.json().groups as { value: string; display: string; type: string }[];
      expect(sortedByValue(groups)).toEqual(sortedByValue(expected));
    }
  });

  it("list pages (offset, filtered lookup, cursor) and a PATCH answer show the same memberships", async () => {
    const queries = [
      `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`,
      `/Users?filter=${encodeURIComponent(`userName sw "member-values-"`)}`,
      "/Users?count=200",
      "/Users?cursor&count=200",
    ];
    const single = (await scim(t, c, "GET", `/Users/${user}`)).json().groups;
    for (const query of queries) {
      const res = await scim(t, c, "GET", query);
      expect(res.statusCode, res.body).toBe(200);
      const found = (res.json().Resources as { id: string; groups?: unknown }[]).find((r) => r.id === user);
      expect(found?.groups, query).toEqual(single);
    }
    const patched = await scim(t, c, "PATCH", `/Users/${user}`, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "replace", path: "nickName", value: "values" }],
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().groups).toEqual(single);
  });

  it("the admin browser shows the same memberships in the same order", async () => {
    const single = (await scim(t, c, "GET", `/Users/${user}`)).json().groups as { value: string; display: string }[];
    const res = await adminCall(t, "GET", `/organizations/${c.organizationId}/users/${user}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().groups).toEqual(single.map((g) => ({ id: g.value, display_name: g.display })));
  });
});
