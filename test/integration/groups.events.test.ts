import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createGroup, FULL_GROUP_PATCH, patchGroup } from "../helpers/groups.js";
import { idpBody } from "../helpers/idp-fixtures.js";
import { insertIdentity } from "../helpers/identities.js";
import { scim } from "../helpers/seed.js";
import { GROUP_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * group.created/updated/deleted, one group.user_added / group.user_removed per user, a nested
 * change is a group.updated of the parent, and a request that changes nothing records nothing (Okta re-sends names).
 * The sink writes through the change's transaction, so only committed events are seen.
 */
const { t, c } = useTestApp({ recording: true, seed: FULL_GROUP_PATCH });
let alice: string;
let bob: string;

beforeAll(async () => {
  alice = await insertIdentity(t.db, c.organizationId, "alice@example.com", {
    name: { givenName: "Alice", familyName: "Liddell" },
    emails: [{ value: "alice@work.example", primary: true }],
  });
  bob = await insertIdentity(t.db, c.organizationId, "bob@example.com");
});
beforeEach(async () => t.recorder.clear());

const kinds = async () => (await t.recorder.events()).map((e) => [e.kind, e.resourceId]);

describe("group events", () => {
  it("POST: group.created, then group.user_added per user with the user's data and the group", async () => {
    const g = await createGroup(t, c, "Created", { externalId: "ext-c", members: [{ value: alice }] });
    const events = await t.recorder.events();
    expect(events.map((e) => e.kind)).toEqual(["group.created", "group.user_added"]);
    expect(events[0]).toEqual({
      kind: "group.created",
      resourceId: g.id,
      clientId: c.clientId,
      data: {
        id: g.id,
        name: "Created",
        raw: { schemas: [GROUP_SCHEMA], id: g.id, externalId: "ext-c", displayName: "Created" },
      },
    });
    expect(events[1]?.data).toMatchObject({
      id: alice,
      first_name: "Alice",
      last_name: "Liddell",
      email: "alice@work.example",
      active: true,
      raw: { userName: "alice@example.com", id: alice },
      group: { id: g.id, name: "Created" },
    });
  });

  it("PATCH add of two users: two user_added, no group.updated", async () => {
    const g = await createGroup(t, c, "Adds");
    await t.recorder.clear();
    const res = await patchGroup(t, c, g.id, [
      { op: "add", path: "members", value: [{ value: alice }, { value: bob }] },
    ]);
    expect(res.statusCode).toBe(200);
    const events = await t.recorder.events();
    expect(events.map((e) => e.kind)).toEqual(["group.user_added", "group.user_added"]);
    expect(events.map((e) => e.data.id).sort()).toEqual([alice, bob].sort());
    expect(events.every((e) => e.resourceId === g.id)).toBe(true);
  });

  it("re-adding an existing member records nothing", async () => {
    const g = await createGroup(t, c, "No-op", { members: [{ value: alice }] });
    await t.recorder.clear();
    const res = await patchGroup(t, c, g.id, [{ op: "add", path: "members", value: [{ value: alice }] }]);
    expect(res.statusCode).toBe(200);
    expect(await t.recorder.events()).toEqual([]);
  });

  it("Okta's unchanged name re-sent with a membership add: user_added only, no group.updated (R6)", async () => {
    const g = await createGroup(t, c, "Okta group");
    await t.recorder.clear();
    const res = await scim(
      t,
      c,
      "PATCH",
      `/Groups/${g.id}`,
      idpBody("okta-group-rename-and-add", { group: g.id, displayName: "Okta group", user3: bob }),
    );
    expect(res.statusCode).toBe(200);
    expect(await kinds()).toEqual([["group.user_added", g.id]]);
  });

  it("Okta's rename is one group.updated; re-sending the same name records nothing", async () => {
    const g = await createGroup(t, c, "Stable");
    await t.recorder.clear();
    await scim(t, c, "PATCH", `/Groups/${g.id}`, idpBody("okta-group-rename", { group: g.id }));
    expect(await kinds()).toEqual([["group.updated", g.id]]);
    await t.recorder.clear();
    await patchGroup(t, c, g.id, [{ op: "replace", value: { id: g.id, displayName: "Test SCIMv2 renamed" } }]);
    expect(await t.recorder.events()).toEqual([]);
  });

  it("remove: user_removed per user; removing a non-member records nothing", async () => {
    const g = await createGroup(t, c, "Removals", { members: [{ value: alice }, { value: bob }] });
    await t.recorder.clear();
    await patchGroup(t, c, g.id, [{ op: "remove", path: "members" }]);
    const events = await t.recorder.events();
    expect(events.map((e) => e.kind)).toEqual(["group.user_removed", "group.user_removed"]);
    expect(events.map((e) => e.data.id).sort()).toEqual([alice, bob].sort());
    await t.recorder.clear();
    await patchGroup(t, c, g.id, [{ op: "remove", path: `members[value eq "${alice}"]` }]);
    expect(await t.recorder.events()).toEqual([]);
  });

  it("PUT with the same state records nothing; PUT swapping members records exactly the difference", async () => {
    const g = await createGroup(t, c, "Put", { members: [{ value: alice }] });
    await t.recorder.clear();
    await scim(t, c, "PUT", `/Groups/${g.id}`, {
      schemas: [GROUP_SCHEMA],
      displayName: "Put",
      members: [{ value: alice }],
    });
    expect(await t.recorder.events()).toEqual([]);
    await scim(t, c, "PUT", `/Groups/${g.id}`, {
      schemas: [GROUP_SCHEMA],
      displayName: "Put",
      members: [{ value: bob }],
    });
    const events = await t.recorder.events();
    expect(events.map((e) => [e.kind, e.data.id])).toEqual([
      ["group.user_removed", alice],
      ["group.user_added", bob],
    ]);
  });

  it("removing and re-adding the same user in one request records nothing", async () => {
    const g = await createGroup(t, c, "Churn", { members: [{ value: alice }] });
    await t.recorder.clear();
    const res = await patchGroup(t, c, g.id, [
      { op: "remove", path: `members[value eq "${alice}"]` },
      { op: "add", path: "members", value: [{ value: alice }] },
    ]);
    expect(res.statusCode).toBe(200);
    expect(await t.recorder.events()).toEqual([]);
  });

  it("a nested-group member change is a group.updated of the parent, not a membership event", async () => {
    const child = await createGroup(t, c, "Nested child");
    const parent = await createGroup(t, c, "Nested parent");
    await t.recorder.clear();
    await patchGroup(t, c, parent.id, [{ op: "add", path: "members", value: [{ value: child.id }] }]);
    expect(await kinds()).toEqual([["group.updated", parent.id]]);
    await t.recorder.clear();
    await patchGroup(t, c, parent.id, [{ op: "remove", path: "members", value: [{ value: child.id }] }]);
    expect(await kinds()).toEqual([["group.updated", parent.id]]);
  });

  it("a refused request records nothing", async () => {
    const g = await createGroup(t, c, "Refused");
    await t.recorder.clear();
    const res = await patchGroup(t, c, g.id, [
      { op: "replace", path: "displayName", value: "Renamed" },
      { op: "add", path: "members", value: [{ value: alice }, { value: "0190a3e0-0000-7000-8000-000000000000" }] },
    ]);
    expect(res.statusCode).toBe(400);
    expect(await t.recorder.events()).toEqual([]);
  });

  it("DELETE: group.deleted, plus group.updated of each group that contained it", async () => {
    const child = await createGroup(t, c, "Deleted child", { members: [{ value: alice }] });
    const parent = await createGroup(t, c, "Surviving parent", { members: [{ value: child.id }] });
    await t.recorder.clear();
    expect((await scim(t, c, "DELETE", `/Groups/${child.id}`)).statusCode).toBe(204);
    expect(await kinds()).toEqual([
      ["group.deleted", child.id],
      ["group.updated", parent.id],
    ]);
    await t.recorder.clear();
    expect((await scim(t, c, "DELETE", `/Groups/${child.id}`)).statusCode).toBe(404);
    expect(await t.recorder.events()).toEqual([]);
  });
});
