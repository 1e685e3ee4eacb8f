import { beforeAll, describe, expect, it } from "vitest";
import { createGroup, patchGroup } from "../helpers/groups.js";
import { type SeededClient, scim } from "../helpers/seed.js";
import { GROUP_SCHEMA, PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * Two organizations on one server: a user or group of the other organization is a 404 everywhere, cannot be a
 * member (400 invalidValue), is never filtered in — and nothing of it reaches the other's webhook.
 */

const { t: e } = useTestApp({ receiver: true });
let mine: SeededClient;
let theirs: SeededClient;
let theirUser: string;
let theirUserName: string;
let theirGroup: string;
let myUser: string;
let myGroup: string;

beforeAll(async () => {
  mine = e.client;
  theirs = await e.seed({ tenant: "other" });
  theirUserName = `theirs-${Math.random().toString(36).slice(2, 8)}`;
  const u = await scim(e, theirs, "POST", "/Users", { schemas: [USER_SCHEMA], userName: theirUserName });
  theirUser = u.json().id as string;
  theirGroup = (await createGroup(e, theirs, "Theirs", { members: [{ value: theirUser }] })).id;
  myUser = (await scim(e, mine, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "mine-1" })).json().id as string;
  myGroup = (await createGroup(e, mine, "Mine")).id;
  await e.deliver();
});

describe("a resource of another organization", () => {
  it.each([
    ["GET", "Users"],
    ["PUT", "Users"],
    ["PATCH", "Users"],
    ["DELETE", "Users"],
    ["GET", "Groups"],
    ["PUT", "Groups"],
    ["PATCH", "Groups"],
    ["DELETE", "Groups"],
  ] as const)("%s /%s/{foreign id} is 404", async (method, kind) => {
    const id = kind === "Users" ? theirUser : theirGroup;
    const body =
      method === "PUT"
        ? kind === "Users"
          ? { schemas: [USER_SCHEMA], userName: "hijack" }
          : { schemas: [GROUP_SCHEMA], displayName: "hijack" }
        : method === "PATCH"
          ? { schemas: [PATCH_OP], Operations: [{ op: "replace", path: "active", value: false }] }
          : undefined;
    const res = await scim(e, mine, method, `/${kind}/${id}`, body);
    expect(res.statusCode).toBe(404);
    expect(res.json().status).toBe("404");
  });

  it("is never listed or matched by a filter", async () => {
    const q = (path: string, filter: string) =>
      scim(e, mine, "GET", `${path}?filter=${encodeURIComponent(filter)}`).then((r) => r.json());
    expect((await q("/Users", `userName eq "${theirUserName}"`)).totalResults).toBe(0);
    expect((await q("/Users", `groups.value eq "${theirGroup}"`)).totalResults).toBe(0);
    expect((await q("/Groups", 'displayName eq "Theirs"')).totalResults).toBe(0);
    const users = (await scim(e, mine, "GET", "/Users")).json();
    expect(users.Resources.map((r: { id: string }) => r.id)).toEqual([myUser]);
  });

  it("cannot be added as a member (400 invalidValue), by POST, PUT or PATCH, with or without a type", async () => {
    const attempts = [
      () => patchGroup(e, mine, myGroup, [{ op: "add", path: "members", value: [{ value: theirUser }] }]),
      () => patchGroup(e, mine, myGroup, [{ op: "add", path: "members", value: [{ value: theirUser, type: "User" }] }]),
      () =>
        patchGroup(e, mine, myGroup, [{ op: "add", path: "members", value: [{ value: theirGroup, type: "Group" }] }]),
      () =>
        patchGroup(e, mine, myGroup, [
          { op: "replace", path: "members", value: [{ value: myUser }, { value: theirUser }] },
        ]),
      () =>
        scim(e, mine, "PUT", `/Groups/${myGroup}`, {
          schemas: [GROUP_SCHEMA],
          displayName: "Mine",
          members: [{ value: theirGroup }],
        }),
      () =>
        scim(e, mine, "POST", "/Groups", {
          schemas: [GROUP_SCHEMA],
          displayName: "X",
          members: [{ value: theirUser }],
        }),
    ];
    for (const attempt of attempts) {
      const res = await attempt();
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().scimType).toBe("invalidValue");
    }
    const group = (await scim(e, mine, "GET", `/Groups/${myGroup}`)).json();
    expect(group.members).toBeUndefined();
    // Their group still has its member, and nothing was announced to anyone.
    const their = (await scim(e, theirs, "GET", `/Groups/${theirGroup}`)).json();
    expect(their.members.map((m: { value: string }) => m.value)).toEqual([theirUser]);
    expect(await e.deliver()).toEqual([]);
  });

  it("removing a foreign id from my group is a no-op that touches nothing of theirs", async () => {
    const res = await patchGroup(e, mine, myGroup, [{ op: "remove", path: `members[value eq "${theirUser}"]` }]);
    expect(res.statusCode).toBe(204);
    const their = (await scim(e, theirs, "GET", `/Groups/${theirGroup}`)).json();
    expect(their.members).toHaveLength(1);
    expect(await e.deliver()).toEqual([]);
  });

  it("auto-link never links to another organization's identity: 409 in another scope, nothing emitted", async () => {
    const linking = await e.seed({ auto_link: true });
    const res = await scim(e, linking, "POST", "/Users", { schemas: [USER_SCHEMA], userName: theirUserName });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ scimType: "uniqueness", detail: "identity already exists in another scope" });
    expect(await e.deliver()).toEqual([]);
  });

  it("each organization's webhooks carry only its own changes, with its own directory_id and tenant", async () => {
    await scim(e, theirs, "PATCH", `/Users/${theirUser}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "nickName", value: "t" }],
    });
    await scim(e, mine, "PATCH", `/Users/${myUser}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "nickName", value: "m" }],
    });
    const ds = await e.deliver();
    const seen = ds.map((d) => [d.body.directory_id, d.body.tenant, d.body.data.id]).sort();
    expect(seen).toEqual(
      [
        [theirs.clientId, "other", theirUser],
        [mine.clientId, "acme-tenant", myUser],
      ].sort(),
    );
  });
});
