import { describe, expect, it } from "vitest";
import { createGroup, patchGroup, type ScimMember } from "../helpers/groups.js";
import { scim } from "../helpers/seed.js";
import { PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/** The users' `groups` attribute and the Groups API, both through SCIM HTTP only. */

const { t, c } = useTestApp({ seed: true });
let n = 0;
const unique = (prefix: string) => `${prefix}-${++n}-${Math.random().toString(36).slice(2, 8)}`;

async function newUser(userName = unique("u")): Promise<{ id: string; userName: string }> {
  const res = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName });
  expect(res.statusCode, res.body).toBe(201);
  return { id: res.json().id as string, userName };
}

const groupsOf = async (id: string, query = ""): Promise<unknown> => {
  const res = await scim(t, c, "GET", `/Users/${id}${query}`);
  expect(res.statusCode).toBe(200);
  return res.json().groups;
};

const members = async (groupId: string): Promise<ScimMember[]> => {
  const res = await scim(t, c, "GET", `/Groups/${groupId}`);
  expect(res.statusCode).toBe(200);
  return res.json().members as ScimMember[];
};

const byGroup = async (groupId: string) => {
  const res = await scim(t, c, "GET", `/Users?filter=${encodeURIComponent(`groups.value eq "${groupId}"`)}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { totalResults: number; Resources?: { id: string }[] };
};

const sorted = (xs: readonly string[]) => [...xs].sort();

describe("users' groups attribute", () => {
  it("lists direct memberships made through the Groups API as {value, display, type: direct}", async () => {
    const u = await newUser();
    const g1 = await createGroup(t, c, "Alpha", { members: [{ value: u.id }] });
    const g2 = await createGroup(t, c, "Beta");
    await patchGroup(t, c, g2.id, [{ op: "add", path: "members", value: [{ value: u.id }] }]);

    expect(await groupsOf(u.id)).toEqual([
      { value: g1.id, display: "Alpha", type: "direct" },
      { value: g2.id, display: "Beta", type: "direct" },
    ]);
    // On list responses too, and on the user's own write responses.
    const listed = await scim(t, c, "GET", `/Users?filter=${encodeURIComponent(`userName eq "${u.userName}"`)}`);
    expect(listed.json().Resources[0].groups).toHaveLength(2);
    const patched = await scim(t, c, "PATCH", `/Users/${u.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "nickName", value: "n" }],
    });
    expect(patched.json().groups).toHaveLength(2);

    await patchGroup(t, c, g1.id, [{ op: "remove", path: `members[value eq "${u.id}"]` }]);
    expect(await groupsOf(u.id)).toEqual([{ value: g2.id, display: "Beta", type: "direct" }]);
  });

  it("does not list groups reached only through nesting; a group's rename shows in display", async () => {
    const u = await newUser();
    const child = await createGroup(t, c, "Child", { members: [{ value: u.id }] });
    const parent = await createGroup(t, c, "Parent", { members: [{ value: child.id, type: "Group" }] });
    expect(await groupsOf(u.id)).toEqual([{ value: child.id, display: "Child", type: "direct" }]);
    expect(sorted((await byGroup(parent.id)).Resources?.map((r) => r.id) ?? [])).toEqual([]);
    expect((await byGroup(parent.id)).totalResults).toBe(0);

    await patchGroup(t, c, child.id, [{ op: "replace", path: "displayName", value: "Child renamed" }]);
    expect(await groupsOf(u.id)).toEqual([{ value: child.id, display: "Child renamed", type: "direct" }]);
  });

  it("GET /Users?filter=groups.value eq returns exactly the direct members", async () => {
    const [a, b, outsider] = [await newUser(), await newUser(), await newUser()];
    const g = await createGroup(t, c, "Filter", { members: [{ value: a.id }, { value: b.id }] });
    await createGroup(t, c, "Other", { members: [{ value: outsider.id }] });
    const body = await byGroup(g.id);
    expect(body.totalResults).toBe(2);
    expect(sorted(body.Resources?.map((r) => r.id) ?? [])).toEqual(sorted([a.id, b.id]));
  });

  it("DELETE /Users/{id} removes the user from its groups", async () => {
    const [gone, stays] = [await newUser(), await newUser()];
    const g = await createGroup(t, c, "Loses one", { members: [{ value: gone.id }, { value: stays.id }] });
    expect((await scim(t, c, "DELETE", `/Users/${gone.id}`)).statusCode).toBe(204);
    expect((await members(g.id)).map((m) => m.value)).toEqual([stays.id]);
    expect((await byGroup(g.id)).totalResults).toBe(1);
  });

  it("DELETE /Users/{id} marks the groups it was a direct member of as modified (meta.lastModified)", async () => {
    const gone = await newUser();
    const g = await createGroup(t, c, "Modified", { members: [{ value: gone.id }] });
    const untouched = await createGroup(t, c, "Untouched");
    const before = (await scim(t, c, "GET", `/Groups/${g.id}`)).json().meta.lastModified as string;
    t.clock.advance(60_000);
    expect((await scim(t, c, "DELETE", `/Users/${gone.id}`)).statusCode).toBe(204);
    const after = (await scim(t, c, "GET", `/Groups/${g.id}`)).json().meta.lastModified as string;
    expect(after).toBe(t.clock.now().toISOString());
    expect(after > before).toBe(true);
    const other = (await scim(t, c, "GET", `/Groups/${untouched.id}`)).json().meta.lastModified as string;
    expect(other).toBe(before);
  });

  it("DELETE /Groups/{id} removes the group from its members' groups", async () => {
    const u = await newUser();
    const keep = await createGroup(t, c, "Keep", { members: [{ value: u.id }] });
    const drop = await createGroup(t, c, "Drop", { members: [{ value: u.id }] });
    expect((await scim(t, c, "DELETE", `/Groups/${drop.id}`)).statusCode).toBe(204);
    expect(await groupsOf(u.id)).toEqual([{ value: keep.id, display: "Keep", type: "direct" }]);
  });

  it("member display is the userName and follows a userName change (PATCH and PUT)", async () => {
    const u = await newUser();
    const g = await createGroup(t, c, "Display", { members: [{ value: u.id }] });
    expect((await members(g.id))[0]).toMatchObject({ value: u.id, display: u.userName, type: "User" });

    const renamed = unique("renamed");
    const res = await scim(t, c, "PATCH", `/Users/${u.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "userName", value: renamed }],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await members(g.id))[0]?.display).toBe(renamed);

    const put = unique("put");
    expect((await scim(t, c, "PUT", `/Users/${u.id}`, { schemas: [USER_SCHEMA], userName: put })).statusCode).toBe(200);
    expect((await members(g.id))[0]?.display).toBe(put);
    // A PUT carrying `groups` does not change memberships (read-only).
    await scim(t, c, "PUT", `/Users/${u.id}`, { schemas: [USER_SCHEMA], userName: put, groups: [] });
    expect((await members(g.id)).map((m) => m.value)).toEqual([u.id]);
  });

  it("excludedAttributes=groups and attributes=groups project the memberships", async () => {
    const u = await newUser();
    const g = await createGroup(t, c, "Projected", { members: [{ value: u.id }] });
    expect(await groupsOf(u.id, "?excludedAttributes=groups")).toBeUndefined();
    const only = await scim(t, c, "GET", `/Users/${u.id}?attributes=groups`);
    expect(only.json().groups).toEqual([{ value: g.id, display: "Projected", type: "direct" }]);
  });
});
