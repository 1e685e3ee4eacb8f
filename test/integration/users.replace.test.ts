import { describe, expect, it } from "vitest";
import { insertGroupWithUser } from "../helpers/groups.js";
import { createUser, scim } from "../helpers/seed.js";
import { USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

const { t, c } = useTestApp({ recording: true, seed: true });
const events = () => t.recorder.events();

const eventsOf = async (id: string) => (await events()).filter((e) => e.resourceId === id).map((e) => e.kind);

describe("PUT /Users/{id} replaces", () => {
  it("resets omitted attributes and keeps the id and created time", async () => {
    const user = await createUser(t, c, { displayName: "Old", title: "Boss", active: false });
    t.clock.advance(60_000);
    const res = await scim(t, c, "PUT", `/Users/${user.id}`, {
      schemas: [USER_SCHEMA],
      userName: user.userName,
      nickName: "N",
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.id).toBe(user.id);
    expect(body.nickName).toBe("N");
    expect(body.displayName).toBeUndefined();
    expect(body.title).toBeUndefined();
    // PUT omitting active re-enables the user.
    expect(body.active).toBe(true);
    expect(body.meta.created).toBe(user.meta.created);
    expect(body.meta.lastModified).toBe(t.clock.now().toISOString());
    expect((await scim(t, c, "GET", `/Users/${user.id}`)).json()).toEqual(body);
  });

  it("deactivates with active false and reactivates with active true", async () => {
    const user = await createUser(t, c);
    const off = await scim(t, c, "PUT", `/Users/${user.id}`, {
      schemas: [USER_SCHEMA],
      userName: user.userName,
      active: false,
    });
    expect(off.json().active).toBe(false);
    const on = await scim(t, c, "PUT", `/Users/${user.id}`, {
      schemas: [USER_SCHEMA],
      userName: user.userName,
      active: true,
    });
    expect(on.json().active).toBe(true);
  });

  it("ignores the read-only id, groups and meta of an Okta-style body", async () => {
    const user = await createUser(t, c);
    const res = await scim(t, c, "PUT", `/Users/${user.id}`, {
      ...user,
      id: "00000000-0000-4000-8000-000000000000",
      groups: [],
      meta: { resourceType: "Group" },
      displayName: "Okta",
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().id).toBe(user.id);
    expect(res.json().meta.resourceType).toBe("User");
    expect(res.json().displayName).toBe("Okta");
  });

  it("renames the userName and frees the old one", async () => {
    const user = await createUser(t, c);
    const renamed = `renamed-${user.id}@example.com`;
    const res = await scim(t, c, "PUT", `/Users/${user.id}`, { schemas: [USER_SCHEMA], userName: renamed });
    expect(res.json().userName).toBe(renamed);
    const again = await createUser(t, c, { userName: user.userName });
    expect(again.id).not.toBe(user.id);
  });

  it("validates like POST", async () => {
    const user = await createUser(t, c);
    const res = await scim(t, c, "PUT", `/Users/${user.id}`, { schemas: [USER_SCHEMA], userName: "" });
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidSyntax");
  });

  it("answers 404 for an unknown id", async () => {
    const res = await scim(t, c, "PUT", "/Users/00000000-0000-4000-8000-000000000000", {
      schemas: [USER_SCHEMA],
      userName: "ghost@example.com",
    });
    expect(res.statusCode).toBe(404);
  });
});

describe("events and no-op writes", () => {
  it("records user.created, user.updated and user.deleted with the user's data, never the password", async () => {
    const user = await createUser(t, c, { name: { givenName: "Ann", familyName: "Lee" }, password: "Secret-123!" });
    await scim(t, c, "PUT", `/Users/${user.id}`, { schemas: [USER_SCHEMA], userName: user.userName, active: false });
    expect((await scim(t, c, "DELETE", `/Users/${user.id}`)).statusCode).toBe(204);
    const recorded = (await events()).filter((e) => e.resourceId === user.id);
    expect(recorded.map((e) => e.kind)).toEqual(["user.created", "user.updated", "user.deleted"]);
    expect(recorded[0]?.data).toMatchObject({ id: user.id, first_name: "Ann", last_name: "Lee", active: true });
    expect(recorded[1]?.data).toMatchObject({ active: false });
    expect(JSON.stringify(recorded)).not.toContain("Secret-123!");
    expect(JSON.stringify(recorded)).not.toContain("argon2");
  });

  it("writes and records nothing for a PUT that changes nothing", async () => {
    const user = await createUser(t, c, { displayName: "Same" });
    t.clock.advance(1000);
    const res = await scim(t, c, "PUT", `/Users/${user.id}`, { ...user });
    expect(res.statusCode).toBe(200);
    expect(res.json().meta.lastModified).toBe(user.meta.lastModified);
    expect(await eventsOf(user.id)).toEqual(["user.created"]);
  });
});

describe("DELETE /Users/{id}", () => {
  it("deletes the identity permanently: 204, then 404", async () => {
    const user = await createUser(t, c);
    const res = await scim(t, c, "DELETE", `/Users/${user.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe("");
    expect((await scim(t, c, "GET", `/Users/${user.id}`)).statusCode).toBe(404);
    expect((await scim(t, c, "DELETE", `/Users/${user.id}`)).statusCode).toBe(404);
    const identifiers = await t.db
      .selectFrom("identity_identifiers")
      .select("value")
      .where("identity_id", "=", user.id)
      .execute();
    expect(identifiers).toEqual([]);
  });

  it("deletes the user's group memberships", async () => {
    const user = await createUser(t, c);
    const groupId = "0190a000-0000-7000-8000-00000000abcd";
    await insertGroupWithUser(t, {
      id: groupId,
      organizationId: c.organizationId,
      displayName: "G",
      identityId: user.id,
    });
    expect((await scim(t, c, "DELETE", `/Users/${user.id}`)).statusCode).toBe(204);
    const rows = await t.db.selectFrom("group_user_members").selectAll().where("group_id", "=", groupId).execute();
    expect(rows).toEqual([]);
  });
});
