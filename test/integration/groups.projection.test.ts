import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { createGroup, patchGroup } from "../helpers/groups.js";
import { insertIdentity } from "../helpers/identities.js";
import type { QuerySpy } from "../helpers/query-spy.js";
import { type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { GROUP_SCHEMA } from "../helpers/constants.js";

/**
 * attributes/excludedAttributes on every group response; when members are not
 * returned they are not read at all, and when they are, one statement reads them for a whole page.
 */
let t: TestApp;
let c: SeededClient;
let spy: QuerySpy;
let group: { id: string } & Record<string, unknown>;
let user: string;

/** Both member reads (a list page's and one group's chunks) join the member users this way. */
const MEMBER_READ = "join identities i on i.id = u.identity_id";

beforeAll(async () => {
  const app = await createTestApp({ queries: true });
  [t, spy] = [app, app.queries];
  c = await seedClient(t);
  user = await insertIdentity(t.db, c.organizationId, "projected@example.com");
  const child = await createGroup(t, c, "Child");
  group = await createGroup(t, c, "Projected", { externalId: "p-1", members: [{ value: user }, { value: child.id }] });
});
afterAll(async () => t.close());
beforeEach(() => spy.reset());

const get = (query: string) => scim(t, c, "GET", `/Groups/${group.id}?${query}`);

describe("GET /Groups/{id} projection", () => {
  it("excludedAttributes=members: no members, and the member tables are not read (Entra)", async () => {
    const body = (await get("excludedAttributes=members")).json();
    expect(body).not.toHaveProperty("members");
    expect(body).toMatchObject({ id: group.id, displayName: "Projected", externalId: "p-1" });
    expect(spy.mentioning(MEMBER_READ)).toBe(0);
    expect(spy.mentioning("group_user_members")).toBe(0);
  });

  it("attributes=displayName: id, schemas and displayName only, members not read (Entra)", async () => {
    const body = (await get("attributes=displayName")).json();
    expect(body).toEqual({ schemas: [GROUP_SCHEMA], id: group.id, displayName: "Projected" });
    expect(spy.mentioning("group_user_members")).toBe(0);
  });

  it("the default reads members once (one chunk: the group has fewer members than a chunk holds)", async () => {
    const body = (await get("")).json();
    expect(body.members).toHaveLength(2);
    expect(spy.mentioning("group_user_members")).toBe(1);
  });

  it("attributes=members.value keeps only the values", async () => {
    const body = (await get("attributes=members.value")).json();
    expect(Object.keys(body).sort()).toEqual(["id", "members", "schemas"]);
    expect(body.members).toHaveLength(2);
    for (const m of body.members) expect(Object.keys(m)).toEqual(["value"]);
  });

  it("excludedAttributes=members.display,meta drops the display names and meta", async () => {
    const body = (await get("excludedAttributes=members.display,meta")).json();
    expect(body).not.toHaveProperty("meta");
    for (const m of body.members) {
      expect(m).not.toHaveProperty("display");
      expect(m).toHaveProperty("type");
    }
  });

  it("names are case-insensitive and may carry the Group URN", async () => {
    const body = (await get(`attributes=${encodeURIComponent(`${GROUP_SCHEMA}:DISPLAYNAME`)}`)).json();
    expect(body).toEqual({ schemas: [GROUP_SCHEMA], id: group.id, displayName: "Projected" });
  });

  it("both attributes and excludedAttributes is 400", async () => {
    const res = await get("attributes=displayName&excludedAttributes=members");
    expect(res.statusCode).toBe(400);
  });
});

describe("projection on writes and lists", () => {
  it("POST and PATCH responses honour it", async () => {
    const created = await scim(t, c, "POST", "/Groups?excludedAttributes=members", {
      schemas: [GROUP_SCHEMA],
      displayName: "Written",
      members: [{ value: user }],
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).not.toHaveProperty("members");
    spy.reset();
    const patched = await patchGroup(
      t,
      c,
      created.json().id,
      [{ op: "remove", path: "members" }],
      "?attributes=displayName",
    );
    expect(patched.json()).toEqual({ schemas: [GROUP_SCHEMA], id: created.json().id, displayName: "Written" });
    expect(spy.mentioning(MEMBER_READ)).toBe(0);
  });

  it("a list page reads members in one statement for all its groups, or not at all", async () => {
    for (const name of ["L1", "L2", "L3"]) await createGroup(t, c, name, { members: [{ value: user }] });
    spy.reset();
    const full = (await scim(t, c, "GET", "/Groups?count=10")).json();
    expect(full.Resources.length).toBeGreaterThanOrEqual(5);
    const listed = full.Resources.filter((r: { displayName: string }) => /^L\d$/.test(r.displayName));
    expect(listed.map((r: { members?: unknown[] }) => r.members?.length)).toEqual([1, 1, 1]);
    expect(spy.mentioning(MEMBER_READ)).toBe(1);
    spy.reset();
    const lean = (await scim(t, c, "GET", "/Groups?count=10&excludedAttributes=members")).json();
    expect(lean.Resources.some((r: object) => "members" in r)).toBe(false);
    expect(spy.mentioning(MEMBER_READ)).toBe(0);
    spy.reset();
    const names = (await scim(t, c, "GET", "/Groups?count=10&attributes=displayName")).json();
    expect(names.Resources.every((r: object) => Object.keys(r).sort().join() === "displayName,id,schemas")).toBe(true);
    expect(spy.mentioning("group_user_members")).toBe(0);
  });
});
