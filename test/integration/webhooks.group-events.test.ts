import { beforeEach, describe, expect, it } from "vitest";
import { createGroup, FULL_GROUP_PATCH, patchGroup } from "../helpers/groups.js";
import { idpBody } from "../helpers/idp-fixtures.js";
import { scim } from "../helpers/seed.js";
import { GROUP_SCHEMA, PRODUCT, TENANT, USER_SCHEMA } from "../helpers/constants.js";
import { type Delivery, kinds } from "../helpers/webhook-receiver.js";
import { useTestApp } from "../helpers/suite.js";

const { t: e, c } = useTestApp({ receiver: true, client: FULL_GROUP_PATCH });
let n = 0;
const unique = (prefix: string) => `${prefix}-${++n}-${Math.random().toString(36).slice(2, 8)}`;

beforeEach(async () => {
  await e.deliver();
});

/** A user created through POST /Users (its user.created delivered and discarded). */
async function newUser(given = "Ada"): Promise<{ id: string; userName: string }> {
  const userName = `${unique("u")}@example.com`;
  const res = await scim(e, c, "POST", "/Users", {
    schemas: [USER_SCHEMA],
    userName,
    name: { givenName: given, familyName: "Member" },
    emails: [{ value: `${userName}.work`, primary: true }],
    password: "never-in-a-webhook",
  });
  expect(res.statusCode, res.body).toBe(201);
  expect(kinds(await e.deliver())).toEqual(["user.created"]);
  return { id: res.json().id as string, userName };
}

async function newGroup(name: string, members: string[] = []): Promise<string> {
  const g = await createGroup(e, c, name, { members: members.map((value) => ({ value })) });
  await e.deliver();
  return g.id;
}

async function storedUser(id: string): Promise<Record<string, unknown>> {
  const res = await scim(e, c, "GET", `/Users/${id}`);
  const { meta: _meta, groups: _groups, ...rest } = res.json() as Record<string, unknown>;
  return rest;
}

const groupRaw = (id: string, displayName: string, externalId?: string) => ({
  schemas: [GROUP_SCHEMA],
  id,
  ...(externalId === undefined ? {} : { externalId }),
  displayName,
});

/** [event, user id] of membership deliveries, sorted (one group's events: one ordering key, commit order). */
const memberEvents = (ds: readonly Delivery[]) => ds.map((d) => [d.event, d.body.data.id]);

describe("group.created / group.updated / group.deleted", () => {
  it("POST with members: group.created, then one group.user_added per user with user data + group", async () => {
    const a = await newUser("Alice");
    const b = await newUser("Bob");
    const g = await createGroup(e, c, "Engineering", {
      externalId: "eng",
      members: [{ value: a.id }, { value: b.id }],
    });
    const ds = await e.deliver();
    expect(kinds(ds)).toEqual(["group.created", "group.user_added", "group.user_added"]);
    const [created, ...added] = ds;
    expect(created?.body).toEqual({
      id: created?.webhookId,
      created_at: e.clock.now().toISOString(),
      directory_id: c.clientId,
      event: "group.created",
      tenant: TENANT,
      product: PRODUCT,
      data: { id: g.id, name: "Engineering", raw: groupRaw(g.id, "Engineering", "eng") },
    });
    const byUser = new Map(added.map((d) => [d.body.data.id, d.body.data]));
    expect([...byUser.keys()].sort()).toEqual([a.id, b.id].sort());
    expect(byUser.get(a.id)).toEqual({
      id: a.id,
      first_name: "Alice",
      last_name: "Member",
      email: `${a.userName}.work`,
      active: true,
      raw: await storedUser(a.id),
      group: { id: g.id, name: "Engineering", raw: groupRaw(g.id, "Engineering", "eng") },
    });
    for (const d of added) expect(d.received.rawBody.toString("utf8")).not.toContain("never-in-a-webhook");
  });

  it("rename (Entra replace displayName, Okta no-path replace) is group.updated; Okta's unchanged name is not", async () => {
    const id = await newGroup("Before");
    const entra = idpBody("entra-group-replace-display-name");
    expect((await scim(e, c, "PATCH", `/Groups/${id}`, entra)).statusCode).toBe(200);
    const renamed = "1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName";
    const [d] = await e.deliver();
    expect(d?.event).toBe("group.updated");
    expect(d?.body.data).toEqual({ id, name: renamed, raw: groupRaw(id, renamed) });

    expect((await scim(e, c, "PATCH", `/Groups/${id}`, idpBody("okta-group-rename", { group: id }))).statusCode).toBe(
      200,
    );
    expect((await e.deliver()).map((x) => [x.event, x.body.data.name])).toEqual([
      ["group.updated", "Test SCIMv2 renamed"],
    ]);

    // Okta re-sends the unchanged name (with a foreign `id` it must ignore): nothing changed, nothing sent.
    const again = idpBody("okta-group-rename", { group: "00000000-0000-4000-8000-000000000000" });
    expect((await scim(e, c, "PATCH", `/Groups/${id}`, again)).statusCode).toBe(200);
    expect(await e.deliver()).toEqual([]);
  });

  it("Okta's rename-and-add with the unchanged name is only the group.user_added", async () => {
    const u = await newUser();
    const id = await newGroup("Stable");
    const body = idpBody("okta-group-rename-and-add", { group: id, displayName: "Stable", user3: u.id });
    expect((await scim(e, c, "PATCH", `/Groups/${id}`, body)).statusCode).toBe(200);
    const ds = await e.deliver();
    expect(memberEvents(ds)).toEqual([["group.user_added", u.id]]);
    expect(ds[0]?.body.data.group).toEqual({ id, name: "Stable", raw: groupRaw(id, "Stable") });
  });

  it("PUT: a changed name is group.updated, member changes are per-user events, the same PUT again nothing", async () => {
    const [a, b, x] = [await newUser(), await newUser(), await newUser()];
    const id = await newGroup("Put", [a.id, b.id]);
    const put = { schemas: [GROUP_SCHEMA], displayName: "Put 2", members: [{ value: b.id }, { value: x.id }] };
    expect((await scim(e, c, "PUT", `/Groups/${id}`, put)).statusCode).toBe(200);
    expect(memberEvents(await e.deliver())).toEqual([
      ["group.updated", id],
      ["group.user_removed", a.id],
      ["group.user_added", x.id],
    ]);
    expect((await scim(e, c, "PUT", `/Groups/${id}`, put)).statusCode).toBe(200);
    expect(await e.deliver()).toEqual([]);
  });

  it("DELETE is one group.deleted (no per-user events); a second DELETE (404) nothing", async () => {
    const u = await newUser();
    const id = await newGroup("Doomed", [u.id]);
    expect((await scim(e, c, "DELETE", `/Groups/${id}`)).statusCode).toBe(204);
    const ds = await e.deliver();
    expect(kinds(ds)).toEqual(["group.deleted"]);
    expect(ds[0]?.body.data).toEqual({ id, name: "Doomed", raw: groupRaw(id, "Doomed") });
    expect((await scim(e, c, "DELETE", `/Groups/${id}`)).statusCode).toBe(404);
    expect(await e.deliver()).toEqual([]);
  });
});

describe("membership forms of Okta and Entra", () => {
  it("Okta add, remove by filter and replace: one event per user whose membership changed", async () => {
    const [u1, u2, u3] = [await newUser(), await newUser(), await newUser()];
    const id = await newGroup("Okta");
    const values = { user1: u1.id, user2: u2.id, user3: u3.id };

    await patchGroup(e, c, id, idpBody("okta-group-add-members", values).Operations as unknown[]);
    expect(memberEvents(await e.deliver()).sort()).toEqual(
      [
        ["group.user_added", u1.id],
        ["group.user_added", u2.id],
      ].sort(),
    );
    // Adding the same members again is a no-op.
    await patchGroup(e, c, id, idpBody("okta-group-add-members", values).Operations as unknown[]);
    expect(await e.deliver()).toEqual([]);

    expect((await scim(e, c, "PATCH", `/Groups/${id}`, idpBody("okta-group-remove-member", values))).statusCode).toBe(
      200,
    );
    expect(memberEvents(await e.deliver())).toEqual([["group.user_removed", u1.id]]);

    // {u2} → {u2, u3}
    expect((await scim(e, c, "PATCH", `/Groups/${id}`, idpBody("okta-group-replace-members", values))).statusCode).toBe(
      200,
    );
    expect(memberEvents(await e.deliver())).toEqual([["group.user_added", u3.id]]);
  });

  it("Entra add (op Add, $ref null) and Entra/JumpCloud remove with a value array remove exactly those", async () => {
    const [u1, u2, u3] = [await newUser(), await newUser(), await newUser()];
    const id = await newGroup("Entra");
    const values = { user1: u1.id, user2: u2.id, user3: u3.id };
    expect((await scim(e, c, "PATCH", `/Groups/${id}`, idpBody("entra-group-add-members", values))).statusCode).toBe(
      200,
    );
    await patchGroup(e, c, id, [{ op: "add", path: "members", value: [{ value: u3.id }] }]);
    expect(memberEvents(await e.deliver()).sort()).toEqual(
      [
        ["group.user_added", u1.id],
        ["group.user_added", u2.id],
        ["group.user_added", u3.id],
      ].sort(),
    );

    expect((await scim(e, c, "PATCH", `/Groups/${id}`, idpBody("entra-group-remove-members", values))).statusCode).toBe(
      200,
    );
    expect(memberEvents(await e.deliver())).toEqual([["group.user_removed", u1.id]]);

    // JumpCloud removes u1 (no longer a member: no-op) and u3.
    expect(
      (await scim(e, c, "PATCH", `/Groups/${id}`, idpBody("jumpcloud-group-remove-members", values))).statusCode,
    ).toBe(200);
    expect(memberEvents(await e.deliver())).toEqual([["group.user_removed", u3.id]]);
    expect((await scim(e, c, "GET", `/Groups/${id}`)).json().members.map((m: { value: string }) => m.value)).toEqual([
      u2.id,
    ]);
  });

  it("remove members without a value removes everyone: one group.user_removed per user", async () => {
    const [u1, u2] = [await newUser(), await newUser()];
    const id = await newGroup("All", [u1.id, u2.id]);
    expect((await scim(e, c, "PATCH", `/Groups/${id}`, idpBody("generic-group-remove-all-members"))).statusCode).toBe(
      200,
    );
    expect(memberEvents(await e.deliver()).sort()).toEqual(
      [
        ["group.user_removed", u1.id],
        ["group.user_removed", u2.id],
      ].sort(),
    );
  });

  it("remove + re-add of one member in one request, and removing a non-member, emit nothing", async () => {
    const [u1, u2] = [await newUser(), await newUser()];
    const id = await newGroup("Churn", [u1.id]);
    const res = await patchGroup(e, c, id, [
      { op: "remove", path: `members[value eq "${u1.id}"]` },
      { op: "add", path: "members", value: [{ value: u1.id }] },
      { op: "remove", path: `members[value eq "${u2.id}"]` },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    expect(await e.deliver()).toEqual([]);
  });
});

describe("nested groups", () => {
  it("adding, removing and deleting a member group is a group.updated of the parent", async () => {
    const u = await newUser();
    const parent = await newGroup("Parent");
    const child = await newGroup("Child", [u.id]);

    await patchGroup(e, c, parent, [{ op: "add", path: "members", value: [{ value: child, type: "Group" }] }]);
    let ds = await e.deliver();
    expect(memberEvents(ds)).toEqual([["group.updated", parent]]);
    expect(ds[0]?.body.data).toEqual({ id: parent, name: "Parent", raw: groupRaw(parent, "Parent") });

    // A member change inside the child is the child's own event, not the parent's.
    const v = await newUser();
    await patchGroup(e, c, child, [{ op: "add", path: "members", value: [{ value: v.id }] }]);
    ds = await e.deliver();
    expect(memberEvents(ds)).toEqual([["group.user_added", v.id]]);
    expect(ds[0]?.body.data.group).toMatchObject({ id: child });

    await patchGroup(e, c, parent, [{ op: "remove", path: `members[value eq "${child}"]` }]);
    expect(memberEvents(await e.deliver())).toEqual([["group.updated", parent]]);

    await patchGroup(e, c, parent, [{ op: "add", path: "members", value: [{ value: child }] }]);
    expect(memberEvents(await e.deliver())).toEqual([["group.updated", parent]]);
    expect((await scim(e, c, "DELETE", `/Groups/${child}`)).statusCode).toBe(204);
    expect(memberEvents(await e.deliver()).sort()).toEqual(
      [
        ["group.deleted", child],
        ["group.updated", parent],
      ].sort(),
    );
  });
});

describe("failed requests emit nothing", () => {
  it("unknown member, cycle, externalId conflict, an atomic PATCH with one bad operation", async () => {
    const u = await newUser();
    const a = await newGroup("A");
    const b = await newGroup("B");
    await patchGroup(e, c, a, [{ op: "add", path: "members", value: [{ value: b }] }]);
    await createGroup(e, c, "Taken", { externalId: "taken" });
    await e.deliver();

    const missing = "01970000-0000-7000-8000-0000000000ff";
    expect((await patchGroup(e, c, a, [{ op: "add", path: "members", value: [{ value: missing }] }])).statusCode).toBe(
      400,
    );
    expect((await patchGroup(e, c, b, [{ op: "add", path: "members", value: [{ value: a }] }])).statusCode).toBe(400);
    expect((await patchGroup(e, c, a, [{ op: "replace", path: "externalId", value: "taken" }])).statusCode).toBe(409);
    const atomic = await patchGroup(e, c, a, [
      { op: "add", path: "members", value: [{ value: u.id }] },
      { op: "replace", path: "displayName", value: "Renamed" },
      { op: "remove" },
    ]);
    expect(atomic.statusCode).toBe(400);
    const post = await scim(e, c, "POST", "/Groups", {
      schemas: [GROUP_SCHEMA],
      displayName: "Bad",
      members: [{ value: u.id }, { value: missing }],
    });
    expect(post.statusCode).toBe(400);
    expect(
      (await scim(e, c, "POST", "/Groups", { schemas: [GROUP_SCHEMA], displayName: "Dup", externalId: "taken" }))
        .statusCode,
    ).toBe(409);
    expect(await e.deliver()).toEqual([]);
  });
});
