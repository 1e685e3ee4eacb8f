import { beforeAll, describe, expect, it } from "vitest";
import { adminCall, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { GROUP_SCHEMA, USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

const { t, c } = useTestApp({ seed: true });
let other: SeededClient;
const ids: Record<string, string> = {};

beforeAll(async () => {
  other = await seedClient(t);
  for (const name of ["ada", "bob", "cy"]) {
    const res = await scim(t, c, "POST", "/Users", {
      schemas: [USER_SCHEMA],
      userName: `${name}@example.com`,
      externalId: `ext-${name}`,
      name: { givenName: name, familyName: "Example" },
      emails: [{ value: `${name}@work.example.com`, primary: true }],
    });
    ids[name] = res.json().id;
  }
  const group = await scim(t, c, "POST", "/Groups", {
    schemas: [GROUP_SCHEMA],
    displayName: "Engineering",
    members: [{ value: ids.ada }, { value: ids.bob }],
  });
  ids.engineering = group.json().id;
  await scim(t, c, "POST", "/Groups", { schemas: [GROUP_SCHEMA], displayName: "Empty" });
});

describe("admin directory browser", () => {
  it("lists an organization's users with their email, state and groups, paged", async () => {
    const first = await adminCall(t, "GET", `/organizations/${c.organizationId}/users?page_size=2`);
    expect(first.statusCode).toBe(200);
    const body = first.json();
    expect(body.users).toHaveLength(2);
    expect(body.next_page_token).not.toBe("");
    // The first unfiltered page says how many there are (the organization's counters); later pages do not.
    expect(body.total_size).toBe(3);
    const second = await adminCall(
      t,
      "GET",
      `/organizations/${c.organizationId}/users?page_size=2&page_token=${body.next_page_token}`,
    );
    expect(second.json().users).toHaveLength(1);
    expect(second.json().next_page_token).toBe("");
    expect(second.json()).not.toHaveProperty("total_size");
    // Ids made in one millisecond of the test clock sort by their random part: find Ada on either page.
    const all = [...body.users, ...second.json().users] as { id: string; user_name: string }[];
    expect(new Set(all.map((u) => u.id)).size).toBe(3);
    const ada = all.find((u) => u.user_name === "ada@example.com");
    expect(ada).toMatchObject({
      id: ids.ada,
      email: "ada@work.example.com",
      display_name: "ada Example",
      active: true,
      groups: [{ id: ids.engineering, display_name: "Engineering" }],
    });
  });

  it("searches users with an eq filter on an indexed attribute", async () => {
    const filter = encodeURIComponent('externalId eq "ext-bob"');
    const res = await adminCall(t, "GET", `/organizations/${c.organizationId}/users?filter=${filter}`);
    expect(res.json().users.map((u: { id: string }) => u.id)).toEqual([ids.bob]);
  });

  it("answers a filter it cannot serve with INVALID_ARGUMENT", async () => {
    const filter = encodeURIComponent('password eq "x"');
    const res = await adminCall(t, "GET", `/organizations/${c.organizationId}/users?filter=${filter}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.status).toBe("INVALID_ARGUMENT");
    expect(res.json().error.message).toMatch(/^filter: /);
  });

  it("shows one user's stored resource, mapped traits and memberships", async () => {
    const res = await adminCall(t, "GET", `/organizations/${c.organizationId}/users/${ids.ada}`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.scim).toMatchObject({ userName: "ada@example.com", externalId: "ext-ada" });
    expect(body.traits).toBeTypeOf("object");
    expect(body.groups).toEqual([{ id: ids.engineering, display_name: "Engineering" }]);
    expect(body).not.toHaveProperty("password");
  });

  it("lists groups with member counts and searches them by displayName", async () => {
    const res = await adminCall(t, "GET", `/organizations/${c.organizationId}/groups`);
    const groups = res.json().groups as { display_name: string; member_count: number }[];
    expect(groups.map((g) => [g.display_name, g.member_count]).sort()).toEqual([
      ["Empty", 0],
      ["Engineering", 2],
    ]);
    expect(res.json().total_size).toBe(2);
    const filter = encodeURIComponent('displayName eq "Engineering"');
    const found = await adminCall(t, "GET", `/organizations/${c.organizationId}/groups?filter=${filter}`);
    expect(found.json().groups.map((g: { id: string }) => g.id)).toEqual([ids.engineering]);
    // A filtered list has no total: counting a filter's matches is not what the counters answer.
    expect(found.json()).not.toHaveProperty("total_size");
  });

  it("shows a group with its members", async () => {
    const res = await adminCall(t, "GET", `/organizations/${c.organizationId}/groups/${ids.engineering}`);
    expect(res.json()).toMatchObject({ display_name: "Engineering", member_count: 2 });
    expect(
      res
        .json()
        .members.map((m: { display: string }) => m.display)
        .sort(),
    ).toEqual(["ada@example.com", "bob@example.com"]);
  });

  it("never shows another organization's users or groups", async () => {
    expect((await adminCall(t, "GET", `/organizations/${other.organizationId}/users`)).json().users).toEqual([]);
    expect((await adminCall(t, "GET", `/organizations/${other.organizationId}/users/${ids.ada}`)).statusCode).toBe(404);
    const group = await adminCall(t, "GET", `/organizations/${other.organizationId}/groups/${ids.engineering}`);
    expect(group.statusCode).toBe(404);
  });

  it("needs the admin token", async () => {
    const res = await t.request({ method: "GET", url: `/v2alpha1/admin/organizations/${c.organizationId}/users` });
    expect(res.statusCode).toBe(401);
  });
});

describe("organization rename", () => {
  it("renames an organization and answers it", async () => {
    const res = await adminCall(t, "PATCH", `/organizations/${other.organizationId}`, { name: "Globex" });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: other.organizationId, name: "Globex" });
    expect((await adminCall(t, "GET", `/organizations/${other.organizationId}`)).json().name).toBe("Globex");
  });

  it("refuses an empty name and an unknown organization", async () => {
    expect((await adminCall(t, "PATCH", `/organizations/${other.organizationId}`, { name: " " })).statusCode).toBe(400);
    const missing = await adminCall(t, "PATCH", "/organizations/00000000-0000-7000-8000-000000000000", { name: "x" });
    expect(missing.statusCode).toBe(404);
  });
});
