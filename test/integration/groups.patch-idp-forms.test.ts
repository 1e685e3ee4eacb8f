import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createGroup, FULL_GROUP_PATCH, memberIds, patchGroup, type ScimMember, sorted } from "../helpers/groups.js";
import { idpBody } from "../helpers/idp-fixtures.js";
import { insertIdentity } from "../helpers/identities.js";
import { scim } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

/** Every membership form Okta, Entra and JumpCloud send, with their real bodies. */
const { t, c } = useTestApp({ seed: FULL_GROUP_PATCH });
let user1: string;
let user2: string;
let user3: string;
let group: { id: string } & Record<string, unknown>;

beforeAll(async () => {
  user1 = await insertIdentity(t.db, c.organizationId, "user1@example.com");
  user2 = await insertIdentity(t.db, c.organizationId, "user2@example.com");
  user3 = await insertIdentity(t.db, c.organizationId, "user3@example.com");
});

beforeEach(async () => {
  group = await createGroup(t, c, "Test SCIMv2", { members: [{ value: user1 }, { value: user2 }] });
});

const ids = () => ({ group: group.id, user1, user2, user3, displayName: "Test SCIMv2" });
const send = (fixture: string, query = "") =>
  scim(t, c, "PATCH", `/Groups/${group.id}${query}`, idpBody(fixture, ids()));

describe("add members", () => {
  it("Okta: add with a value array (display ignored, no type)", async () => {
    const fresh = await createGroup(t, c, "Empty");
    const res = await scim(t, c, "PATCH", `/Groups/${fresh.id}`, idpBody("okta-group-add-members", ids()));
    expect(res.statusCode).toBe(200);
    const members = res.json().members as ScimMember[];
    expect(members.map((m) => m.value).sort()).toEqual(sorted([user1, user2]));
    expect(members.find((m) => m.value === user1)?.display).toBe("user1@example.com");
  });

  it("Entra: capitalised Add with $ref null and no type", async () => {
    const fresh = await createGroup(t, c, "Empty");
    const res = await scim(t, c, "PATCH", `/Groups/${fresh.id}`, idpBody("entra-group-add-members", ids()));
    expect(res.statusCode).toBe(200);
    expect(await memberIds(t, c, fresh.id)).toEqual(sorted([user1, user2]));
  });

  it("JumpCloud: adding an existing member is a no-op next to a new one", async () => {
    const res = await send("jumpcloud-group-add-members");
    expect(res.statusCode).toBe(200);
    expect(await memberIds(t, c, group.id)).toEqual(sorted([user1, user2, user3]));
  });
});

describe("remove members", () => {
  it.each([
    ['Okta: remove members[value eq "<id>"] removes that member only', "okta-group-remove-member"],
    ["Entra: Remove members with a value array removes exactly those, never all", "entra-group-remove-members"],
    ["JumpCloud: remove with a value array, one of them not a member", "jumpcloud-group-remove-members"],
  ])("%s", async (_title, fixture) => {
    const res = await send(fixture);
    expect(res.statusCode).toBe(200);
    expect(await memberIds(t, c, group.id)).toEqual([user2]);
  });

  it("remove members without a value removes all members", async () => {
    const res = await send("generic-group-remove-all-members");
    expect(res.statusCode).toBe(200);
    expect(res.json().members).toBeUndefined();
    expect(await memberIds(t, c, group.id)).toEqual([]);
  });

  it("remove without a path is 400 noTarget and changes nothing", async () => {
    const res = await send("generic-group-remove-without-path");
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("noTarget");
    expect(await memberIds(t, c, group.id)).toEqual(sorted([user1, user2]));
  });
});

describe("replace", () => {
  it("Okta: replace members swaps the whole list", async () => {
    const res = await send("okta-group-replace-members");
    expect(res.statusCode).toBe(200);
    expect(await memberIds(t, c, group.id)).toEqual(sorted([user2, user3]));
  });

  it("Okta: no-path replace {id, displayName} renames; the id is ignored", async () => {
    const res = await send("okta-group-rename");
    expect(res.statusCode).toBe(200);
    expect(res.json().id).toBe(group.id);
    expect(res.json().displayName).toBe("Test SCIMv2 renamed");
    expect(await memberIds(t, c, group.id)).toEqual(sorted([user1, user2]));
  });

  it("Okta: no-path replace carrying another id still renames this group only", async () => {
    const other = await createGroup(t, c, "Other");
    const res = await patchGroup(t, c, group.id, [{ op: "replace", value: { id: other.id, displayName: "Mine" } }]);
    expect(res.statusCode).toBe(200);
    expect(res.json().id).toBe(group.id);
    expect((await scim(t, c, "GET", `/Groups/${other.id}`)).json().displayName).toBe("Other");
  });

  it("Okta: unchanged name re-sent with a membership add", async () => {
    const res = await send("okta-group-rename-and-add");
    expect(res.statusCode).toBe(200);
    expect(res.json().displayName).toBe("Test SCIMv2");
    expect(await memberIds(t, c, group.id)).toEqual(sorted([user1, user2, user3]));
  });

  it("Entra: Replace displayName", async () => {
    const res = await send("entra-group-replace-display-name");
    expect(res.statusCode).toBe(200);
    expect(res.json().displayName).toBe("1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName");
  });

  it("Entra: its create body (extra schema URN, meta) is accepted", async () => {
    const res = await scim(t, c, "POST", "/Groups", idpBody("entra-group-create"));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      displayName: "displayName",
      externalId: "8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159",
    });
  });

  it("replace displayName with an empty string is 400 invalidValue; remove displayName is refused", async () => {
    const empty = await patchGroup(t, c, group.id, [{ op: "replace", path: "displayName", value: "" }]);
    expect(empty.statusCode).toBe(400);
    expect(empty.json().scimType).toBe("invalidValue");
    const removed = await patchGroup(t, c, group.id, [{ op: "remove", path: "displayName" }]);
    expect(removed.statusCode).toBe(400);
    expect((await scim(t, c, "GET", `/Groups/${group.id}`)).json().displayName).toBe("Test SCIMv2");
  });

  it("externalId can be set and removed by PATCH", async () => {
    const set = await patchGroup(t, c, group.id, [{ op: "add", path: "externalId", value: "ext-patched" }]);
    expect(set.json().externalId).toBe("ext-patched");
    const removed = await patchGroup(t, c, group.id, [{ op: "remove", path: "externalId" }]);
    expect(removed.statusCode).toBe(200);
    expect(removed.json().externalId).toBeUndefined();
  });
});

describe("atomicity", () => {
  it("a failing later operation undoes the earlier ones (one transaction)", async () => {
    const res = await patchGroup(t, c, group.id, [
      { op: "replace", path: "displayName", value: "Half done" },
      { op: "remove", path: "members" },
      { op: "add", path: "members", value: [{ value: "00000000-0000-4000-8000-000000000000" }] },
    ]);
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidValue");
    const after = (await scim(t, c, "GET", `/Groups/${group.id}`)).json();
    expect(after.displayName).toBe("Test SCIMv2");
    expect((after.members as ScimMember[]).map((m) => m.value).sort()).toEqual(sorted([user1, user2]));
  });

  it("operations apply in order: remove all, then add one", async () => {
    const res = await patchGroup(t, c, group.id, [
      { op: "remove", path: "members" },
      { op: "add", path: "members", value: [{ value: user3 }] },
    ]);
    expect(res.statusCode).toBe(200);
    expect(await memberIds(t, c, group.id)).toEqual([user3]);
  });

  it("a PATCH of an unknown group is 404", async () => {
    const res = await patchGroup(t, c, "00000000-0000-4000-8000-000000000000", [
      { op: "replace", path: "displayName", value: "x" },
    ]);
    expect(res.statusCode).toBe(404);
  });
});
