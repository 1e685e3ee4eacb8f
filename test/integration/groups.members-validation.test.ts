import { beforeAll, describe, expect, it } from "vitest";
import { createGroup, memberIds, patchGroup, type ScimMember } from "../helpers/groups.js";
import { insertIdentity } from "../helpers/identities.js";
import { type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { GROUP_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/** Member rules (same organization, existing, type inferred when absent), through POST, PUT and PATCH. */
const { t, c } = useTestApp({ seed: true });
let other: SeededClient;
let user: string;
let foreignUser: string;
let foreignGroup: string;
let group: string;

beforeAll(async () => {
  other = await seedClient(t);
  user = await insertIdentity(t.db, c.organizationId, "member@example.com");
  foreignUser = await insertIdentity(t.db, other.organizationId, "foreign@example.com");
  foreignGroup = (await createGroup(t, other, "Foreign")).id;
  group = (await createGroup(t, c, "Target", { members: [{ value: user }] })).id;
});

const UNKNOWN = "0190a3e0-0000-7000-8000-000000000000";

const invalidMembers: [string, () => unknown[]][] = [
  ["a user of another organization", () => [{ value: foreignUser }]],
  ["a group of another organization", () => [{ value: foreignGroup, type: "Group" }]],
  ["an unknown id", () => [{ value: UNKNOWN }]],
  ["a non-UUID value", () => [{ value: "271" }]],
  ["a numeric value", () => [{ value: 42 }]],
  ["a missing value", () => [{ display: "no value" }]],
  ["type Role", () => [{ value: user, type: "Role" }]],
  ["type Group for a user", () => [{ value: user, type: "Group" }]],
  ["one bad member among good ones", () => [{ value: user }, { value: UNKNOWN }]],
];

describe.each(invalidMembers)("refuses %s with 400 invalidValue", (_name, members) => {
  it("on POST, creating nothing", async () => {
    const res = await scim(t, c, "POST", "/Groups", {
      schemas: [GROUP_SCHEMA],
      displayName: "Never",
      members: members(),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidValue");
    const list = await scim(t, c, "GET", `/Groups?filter=${encodeURIComponent('displayName eq "Never"')}`);
    expect(list.json().totalResults).toBe(0);
  });

  it("on PUT, changing nothing", async () => {
    const res = await scim(t, c, "PUT", `/Groups/${group}`, {
      schemas: [GROUP_SCHEMA],
      displayName: "Renamed",
      members: members(),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidValue");
    const after = (await scim(t, c, "GET", `/Groups/${group}`)).json();
    expect(after.displayName).toBe("Target");
    expect((after.members as ScimMember[]).map((m) => m.value)).toEqual([user]);
  });

  it("on PATCH add", async () => {
    const res = await patchGroup(t, c, group, [{ op: "add", path: "members", value: members() }]);
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidValue");
    expect(await memberIds(t, c, group)).toEqual([user]);
  });
});

describe("member types", () => {
  it("infers User and Group when type is missing (Entra, Okta)", async () => {
    const child = await createGroup(t, c, "Inferred child");
    const res = await scim(t, c, "POST", "/Groups", {
      schemas: [GROUP_SCHEMA],
      displayName: "Inferred",
      members: [{ value: user }, { value: child.id }],
    });
    expect(res.statusCode).toBe(201);
    const members = res.json().members as ScimMember[];
    expect(members.find((m) => m.value === user)).toMatchObject({ type: "User", display: "member@example.com" });
    expect(members.find((m) => m.value === child.id)).toMatchObject({ type: "Group", display: "Inferred child" });
    expect(members.find((m) => m.value === child.id)?.$ref).toMatch(new RegExp(`/Groups/${child.id}$`));
  });

  it("accepts the type in any case and an upper-case UUID", async () => {
    const res = await scim(t, c, "POST", "/Groups", {
      schemas: [GROUP_SCHEMA],
      displayName: "Typed",
      members: [{ value: user.toUpperCase(), type: "user" }],
    });
    expect(res.statusCode).toBe(201);
    expect((res.json().members as ScimMember[])[0]).toMatchObject({ value: user, type: "User" });
  });

  it("refuses an unknown id added through a members[value eq] filter", async () => {
    const res = await patchGroup(t, c, group, [{ op: "add", path: `members[value eq "${UNKNOWN}"]`, value: {} }]);
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidValue");
  });

  it("removing an id that is not a member (or unknown) is a no-op, not an error", async () => {
    const res = await patchGroup(t, c, group, [{ op: "remove", path: `members[value eq "${UNKNOWN}"]` }]);
    expect(res.statusCode).toBe(204);
    expect(await memberIds(t, c, group)).toEqual([user]);
  });

  it("removing a non-UUID value is 400 invalidValue", async () => {
    const res = await patchGroup(t, c, group, [{ op: "remove", path: "members", value: [{ value: "271" }] }]);
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidValue");
  });
});
