import { describe, expect, it } from "vitest";
import { createGroup, memberIds, patchGroup, sorted } from "../helpers/groups.js";
import { insertIdentity } from "../helpers/identities.js";
import { scim } from "../helpers/seed.js";
import { GROUP_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/** Nested groups: a group never contains itself, directly or not. */
const { t, c } = useTestApp({ seed: true });

const expectCycleRefused = async (res: { statusCode: number; json(): { scimType?: string; detail?: string } }) => {
  expect(res.statusCode).toBe(400);
  expect(res.json().scimType).toBe("invalidValue");
  expect(res.json().detail).toMatch(/cycle|itself/);
};

describe("nested groups", () => {
  it("a group holds users and groups side by side; a user in a sub-group is not a direct member", async () => {
    const u = await insertIdentity(t.db, c.organizationId, "nested-user");
    const v = await insertIdentity(t.db, c.organizationId, "sub-user");
    const child = await createGroup(t, c, "Child", { members: [{ value: v }] });
    const parent = await createGroup(t, c, "Parent", { members: [{ value: u }, { value: child.id, type: "Group" }] });
    expect(await memberIds(t, c, parent.id)).toEqual(sorted([u, child.id]));
    expect(await memberIds(t, c, child.id)).toEqual([v]);
  });

  it("a group can be a member of several parents (a DAG is not a cycle)", async () => {
    const shared = await createGroup(t, c, "Shared");
    const a = await createGroup(t, c, "A", { members: [{ value: shared.id }] });
    const b = await createGroup(t, c, "B", { members: [{ value: shared.id }] });
    const top = await createGroup(t, c, "Top", { members: [{ value: a.id }, { value: b.id }] });
    expect(await memberIds(t, c, top.id)).toEqual(sorted([a.id, b.id]));
  });

  it("removing a nested group by value leaves the sub-group itself alone", async () => {
    const child = await createGroup(t, c, "Kept child");
    const parent = await createGroup(t, c, "Dropping parent", { members: [{ value: child.id }] });
    const res = await patchGroup(t, c, parent.id, [{ op: "remove", path: `members[value eq "${child.id}"]` }]);
    expect(res.statusCode).toBe(204);
    expect(await memberIds(t, c, parent.id)).toEqual([]);
    expect((await scim(t, c, "GET", `/Groups/${child.id}`)).statusCode).toBe(200);
  });

  it("a renamed sub-group shows its new display name in the parent", async () => {
    const child = await createGroup(t, c, "Old name");
    const parent = await createGroup(t, c, "Holder", { members: [{ value: child.id }] });
    await patchGroup(t, c, child.id, [{ op: "replace", path: "displayName", value: "New name" }]);
    const members = (await scim(t, c, "GET", `/Groups/${parent.id}`)).json().members;
    expect(members).toEqual([expect.objectContaining({ value: child.id, display: "New name", type: "Group" })]);
  });
});

describe("cycles are refused with 400 invalidValue", () => {
  it("a group as its own member (PATCH add)", async () => {
    const g = await createGroup(t, c, "Self");
    await expectCycleRefused(await patchGroup(t, c, g.id, [{ op: "add", path: "members", value: [{ value: g.id }] }]));
    expect(await memberIds(t, c, g.id)).toEqual([]);
  });

  it("a group as its own member (PUT)", async () => {
    const g = await createGroup(t, c, "Self put");
    await expectCycleRefused(
      await scim(t, c, "PUT", `/Groups/${g.id}`, {
        schemas: [GROUP_SCHEMA],
        displayName: "x",
        members: [{ value: g.id }],
      }),
    );
  });

  it("a two-group cycle", async () => {
    const a = await createGroup(t, c, "Cycle A");
    const b = await createGroup(t, c, "Cycle B", { members: [{ value: a.id }] });
    await expectCycleRefused(await patchGroup(t, c, a.id, [{ op: "add", path: "members", value: [{ value: b.id }] }]));
    expect(await memberIds(t, c, a.id)).toEqual([]);
  });

  it("a longer cycle (a → b → c → d, then d ∋ a), also by replace and by PUT", async () => {
    const d = await createGroup(t, c, "D");
    const cc = await createGroup(t, c, "C", { members: [{ value: d.id }] });
    const b = await createGroup(t, c, "B", { members: [{ value: cc.id }] });
    const a = await createGroup(t, c, "A", { members: [{ value: b.id }] });
    await expectCycleRefused(await patchGroup(t, c, d.id, [{ op: "add", path: "members", value: [{ value: a.id }] }]));
    await expectCycleRefused(
      await patchGroup(t, c, d.id, [{ op: "replace", path: "members", value: [{ value: b.id }] }]),
    );
    await expectCycleRefused(
      await scim(t, c, "PUT", `/Groups/${d.id}`, {
        schemas: [GROUP_SCHEMA],
        displayName: "D",
        members: [{ value: cc.id }],
      }),
    );
    expect(await memberIds(t, c, d.id)).toEqual([]);
  });

  it("breaking the chain first makes the same membership legal", async () => {
    const a = await createGroup(t, c, "Chain A");
    const b = await createGroup(t, c, "Chain B", { members: [{ value: a.id }] });
    const res = await patchGroup(t, c, a.id, [{ op: "add", path: "members", value: [{ value: b.id }] }]);
    await expectCycleRefused(res);
    const unlink = await patchGroup(t, c, b.id, [{ op: "remove", path: "members" }]);
    expect(unlink.statusCode).toBe(204);
    const link = await patchGroup(t, c, a.id, [{ op: "add", path: "members", value: [{ value: b.id }] }]);
    expect(link.statusCode).toBe(204);
    expect(await memberIds(t, c, a.id)).toEqual([b.id]);
  });
});
