import type { LightMyRequestResponse } from "fastify";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { GROUP_SCHEMA, PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { MEMBER_CHUNK } from "../../src/scim/groups/send.js";
import { insertIdentities } from "../helpers/identities.js";
import { scim } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * ETags (RFC 7644 §3.14): `meta.version` is a weak entity tag, the `ETag` header repeats it on every answer that
 * carries one resource, If-None-Match on a GET answers 304, and If-Match on PUT, PATCH and DELETE answers 412 unless
 * it names the current version; without these headers nothing changes.
 */
const { t, c } = useTestApp({ seed: true });

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

const call = (method: Method, path: string, headers: Record<string, string>, payload?: unknown) =>
  t.request({
    method,
    url: `${c.base}${path}`,
    headers: { ...c.headers, ...headers },
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  });

const WEAK = /^W\/"\d+"$/;
const etag = (res: LightMyRequestResponse): string => res.headers.etag as string;
/** Checks that an answer's ETag header is a weak tag and its meta.version repeats it; returns the tag. */
function versionOf(res: LightMyRequestResponse): string {
  expect(etag(res)).toMatch(WEAK);
  expect(res.json().meta.version).toBe(etag(res));
  return etag(res);
}
/** A GET of `path` with If-None-Match `tags` answers 304 without a body, its ETag header the current version. */
async function expectNotModified(path: string, tags: string, current: string): Promise<void> {
  const res = await call("GET", path, { "if-none-match": tags });
  expect(res.statusCode).toBe(304);
  expect(res.body).toBe("");
  expect(etag(res)).toBe(current);
}
const patchOp = (operations: unknown[]) => ({ schemas: [PATCH_OP], Operations: operations });
const replace = (path: string, value: unknown) => ({ op: "replace", path, value });
const addMember = (id: string) => ({ op: "add", path: "members", value: [{ value: id }] });
/** A PATCH of these operations, without a precondition. */
const patch = (path: string, ...operations: unknown[]) => scim(t, c, "PATCH", path, patchOp(operations));
/** A PATCH of these operations that applies only if the resource's version matches `ifMatch`. */
const patchIf = (path: string, ifMatch: string, ...operations: unknown[]) =>
  call("PATCH", path, { "if-match": ifMatch }, patchOp(operations));
const userBody = (userName: string, extra: Record<string, unknown> = {}) => ({
  schemas: [USER_SCHEMA],
  userName,
  ...extra,
});

async function newUser(userName: string): Promise<{ id: string; etag: string }> {
  const res = await scim(t, c, "POST", "/Users", userBody(userName));
  expect(res.statusCode).toBe(201);
  return { id: res.json().id, etag: etag(res) };
}

async function newGroup(displayName: string, members: string[] = []): Promise<{ id: string; etag: string }> {
  const res = await scim(t, c, "POST", "/Groups", {
    schemas: [GROUP_SCHEMA],
    displayName,
    members: members.map((value) => ({ value })),
  });
  expect(res.statusCode).toBe(201);
  return { id: res.json().id, etag: etag(res) };
}

describe("Users", () => {
  it("every answer's ETag header is its meta.version, a weak tag, and a change changes it", async () => {
    const created = await scim(t, c, "POST", "/Users", userBody("etag-1@example.com"));
    const first = versionOf(created);
    const id = created.json().id as string;
    expect(versionOf(await scim(t, c, "GET", `/Users/${id}`))).toBe(first);

    const patched = await patch(`/Users/${id}`, replace("title", "A"));
    expect(patched.statusCode).toBe(200);
    expect(versionOf(patched)).not.toBe(first);

    const put = await scim(t, c, "PUT", `/Users/${id}`, userBody("etag-1@example.com", { title: "B" }));
    expect(versionOf(put)).not.toBe(etag(patched));
    expect(etag(await scim(t, c, "GET", `/Users/${id}`))).toBe(etag(put));
  });

  it("meta.version in lists and .search, and under a projection as the rest of meta", async () => {
    const user = await newUser("etag-list@example.com");
    const filter = encodeURIComponent('userName eq "etag-list@example.com"');
    const list = await scim(t, c, "GET", `/Users?filter=${filter}`);
    expect(list.json().Resources[0].meta.version).toBe(user.etag);
    const search = await scim(t, c, "POST", "/Users/.search", {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
      filter: 'userName eq "etag-list@example.com"',
    });
    expect(search.json().Resources[0].meta.version).toBe(user.etag);
    const projected = await scim(t, c, "GET", `/Users/${user.id}?attributes=meta.version`);
    expect(projected.json().meta).toEqual({ version: user.etag });
    expect(etag(projected)).toBe(user.etag);
    const without = await scim(t, c, "GET", `/Users/${user.id}?excludedAttributes=meta`);
    expect(without.json()).not.toHaveProperty("meta");
    expect(etag(without)).toBe(user.etag);
  });

  it("If-None-Match: 304 without a body for the current version or *, 200 for a stale one", async () => {
    const user = await newUser("etag-304@example.com");
    await expectNotModified(`/Users/${user.id}`, user.etag, user.etag);
    await expectNotModified(`/Users/${user.id}`, "*", user.etag);
    // Weak comparison: the strong form of the same tag, in a list, matches too.
    const strong = user.etag.slice(2);
    await expectNotModified(`/Users/${user.id}`, `"x", ${strong}`, user.etag);

    await patch(`/Users/${user.id}`, replace("title", "T"));
    const stale = await call("GET", `/Users/${user.id}`, { "if-none-match": user.etag });
    expect(stale.statusCode).toBe(200);
    expect(etag(stale)).not.toBe(user.etag);
    expect(stale.json().title).toBe("T");
  });

  it("If-Match stale on PATCH and PUT: 412 and nothing changed; current or * applies", async () => {
    const user = await newUser("etag-412@example.com");
    const first = await patchIf(`/Users/${user.id}`, user.etag, replace("title", "first"));
    expect(first.statusCode).toBe(200);
    expect(first.json().title).toBe("first");

    const stalePatch = await patchIf(`/Users/${user.id}`, user.etag, replace("title", "lost"));
    expect(stalePatch.statusCode).toBe(412);
    expect(stalePatch.json()).toEqual({
      schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
      status: "412",
      detail: `the resource has changed: its version is ${etag(first)}`,
    });
    const stalePut = await call(
      "PUT",
      `/Users/${user.id}`,
      { "if-match": user.etag },
      userBody("etag-412@example.com", { title: "lost" }),
    );
    expect(stalePut.statusCode).toBe(412);
    const after = await scim(t, c, "GET", `/Users/${user.id}`);
    expect(after.json().title).toBe("first");
    expect(etag(after)).toBe(etag(first));

    // A PATCH that would change nothing is refused all the same when the tag is stale.
    const unchanged = await patchIf(`/Users/${user.id}`, user.etag, replace("title", "first"));
    expect(unchanged.statusCode).toBe(412);

    const put = await call(
      "PUT",
      `/Users/${user.id}`,
      { "if-match": `"1000", ${etag(first)}` },
      userBody("etag-412@example.com", { title: "second" }),
    );
    expect(put.statusCode).toBe(200);
    expect(put.json().title).toBe("second");
    const any = await patchIf(`/Users/${user.id}`, "*", replace("title", "third"));
    expect(any.statusCode).toBe(200);
    expect(any.json().title).toBe("third");
  });

  it("If-Match on a password change (the locked path) is checked too", async () => {
    const user = await newUser("etag-password@example.com");
    await patch(`/Users/${user.id}`, replace("title", "x"));
    const stale = await patchIf(`/Users/${user.id}`, user.etag, replace("password", "N3w-passw0rd!long"));
    expect(stale.statusCode).toBe(412);
    const current = etag(await scim(t, c, "GET", `/Users/${user.id}`));
    const ok = await patchIf(`/Users/${user.id}`, current, replace("password", "N3w-passw0rd!long"));
    expect(ok.statusCode).toBe(200);
    expect(etag(ok)).not.toBe(current);
  });

  it("two writes with the same If-Match at once: one applies, the other is 412", async () => {
    const user = await newUser("etag-race@example.com");
    const write = (title: string) => patchIf(`/Users/${user.id}`, user.etag, replace("title", title));
    const answers = await Promise.all([write("one"), write("two"), write("three")]);
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 412, 412]);
    const winner = answers.find((r) => r.statusCode === 200)?.json().title;
    expect((await scim(t, c, "GET", `/Users/${user.id}`)).json().title).toBe(winner);
  });

  it("DELETE with a stale If-Match: 412 and the user still exists; with the current one: 204", async () => {
    const user = await newUser("etag-delete@example.com");
    const changed = await patch(`/Users/${user.id}`, replace("title", "x"));
    const stale = await call("DELETE", `/Users/${user.id}`, { "if-match": user.etag });
    expect(stale.statusCode).toBe(412);
    expect((await scim(t, c, "GET", `/Users/${user.id}`)).statusCode).toBe(200);
    expect((await call("DELETE", `/Users/${user.id}`, { "if-match": etag(changed) })).statusCode).toBe(204);
    expect((await scim(t, c, "GET", `/Users/${user.id}`)).statusCode).toBe(404);
    // A resource that is gone is 404 whatever the precondition (RFC 9110 §13.2.1).
    expect((await call("DELETE", `/Users/${user.id}`, { "if-match": "*" })).statusCode).toBe(404);
  });
});

describe("Groups", () => {
  it("every answer's ETag header is its meta.version; a rename changes it", async () => {
    const created = await scim(t, c, "POST", "/Groups", { schemas: [GROUP_SCHEMA], displayName: "ETag group" });
    const first = versionOf(created);
    const id = created.json().id as string;
    expect(versionOf(await scim(t, c, "GET", `/Groups/${id}`))).toBe(first);

    const renamed = await patch(`/Groups/${id}?attributes=displayName,meta`, replace("displayName", "ETag group 2"));
    expect(renamed.statusCode).toBe(200);
    expect(versionOf(renamed)).not.toBe(first);

    const put = await scim(t, c, "PUT", `/Groups/${id}`, { schemas: [GROUP_SCHEMA], displayName: "ETag group 3" });
    expect(versionOf(put)).not.toBe(etag(renamed));

    const list = await scim(t, c, "GET", `/Groups?filter=${encodeURIComponent('displayName eq "ETag group 3"')}`);
    expect(list.json().Resources[0].meta.version).toBe(etag(put));
  });

  it("a membership PATCH (204) changes the version and carries the new ETag", async () => {
    const user = await newUser("etag-member@example.com");
    const group = await newGroup("ETag members");
    const added = await patch(`/Groups/${group.id}`, addMember(user.id));
    expect(added.statusCode).toBe(204);
    expect(etag(added)).toMatch(WEAK);
    expect(etag(added)).not.toBe(group.etag);
    expect(etag(await scim(t, c, "GET", `/Groups/${group.id}`))).toBe(etag(added));

    const removed = await patch(`/Groups/${group.id}`, { op: "remove", path: `members[value eq "${user.id}"]` });
    expect(etag(removed)).not.toBe(etag(added));
    // Deleting a member user changes the group too.
    await patch(`/Groups/${group.id}`, addMember(user.id));
    const before = etag(await scim(t, c, "GET", `/Groups/${group.id}`));
    expect((await scim(t, c, "DELETE", `/Users/${user.id}`)).statusCode).toBe(204);
    expect(etag(await scim(t, c, "GET", `/Groups/${group.id}`))).not.toBe(before);
  });

  it("If-None-Match: 304 for the current version or *, 200 for a stale one", async () => {
    const group = await newGroup("ETag 304");
    await expectNotModified(`/Groups/${group.id}`, group.etag, group.etag);
    await expectNotModified(`/Groups/${group.id}`, "*", group.etag);
    await patch(`/Groups/${group.id}`, replace("displayName", "N"));
    const stale = await call("GET", `/Groups/${group.id}`, { "if-none-match": group.etag });
    expect(stale.statusCode).toBe(200);
    expect(stale.json().displayName).toBe("N");
  });

  it("If-Match stale on PATCH and PUT: 412 and nothing changed; current or * applies", async () => {
    const user = await newUser("etag-group-412@example.com");
    const group = await newGroup("ETag 412");
    const first = await patchIf(`/Groups/${group.id}`, group.etag, replace("displayName", "ETag 412 first"));
    expect(first.statusCode).toBe(204);

    const stale = await patchIf(`/Groups/${group.id}`, group.etag, addMember(user.id));
    expect(stale.statusCode).toBe(412);
    expect(stale.json().detail).toBe(`the resource has changed: its version is ${etag(first)}`);
    const stalePut = await call(
      "PUT",
      `/Groups/${group.id}`,
      { "if-match": group.etag },
      {
        schemas: [GROUP_SCHEMA],
        displayName: "lost",
        members: [{ value: user.id }],
      },
    );
    expect(stalePut.statusCode).toBe(412);
    const after = await scim(t, c, "GET", `/Groups/${group.id}`);
    expect(after.json().displayName).toBe("ETag 412 first");
    expect(after.json()).not.toHaveProperty("members");
    expect(etag(after)).toBe(etag(first));

    const put = await call(
      "PUT",
      `/Groups/${group.id}`,
      { "if-match": etag(first) },
      {
        schemas: [GROUP_SCHEMA],
        displayName: "ETag 412 second",
        members: [{ value: user.id }],
      },
    );
    expect(put.statusCode).toBe(200);
    expect(put.json().members).toHaveLength(1);
    const any = await patchIf(`/Groups/${group.id}`, "*", replace("displayName", "ETag 412 third"));
    expect(any.statusCode).toBe(204);
  });

  it("two membership PATCHes with the same If-Match at once: one applies, the other is 412", async () => {
    const a = await newUser("etag-race-a@example.com");
    const b = await newUser("etag-race-b@example.com");
    const group = await newGroup("ETag race");
    const add = (member: string) => patchIf(`/Groups/${group.id}`, group.etag, addMember(member));
    const answers = await Promise.all([add(a.id), add(b.id)]);
    expect(answers.map((r) => r.statusCode).sort()).toEqual([204, 412]);
    expect((await scim(t, c, "GET", `/Groups/${group.id}`)).json().members).toHaveLength(1);
  });

  it("DELETE with a stale If-Match: 412 and the group still exists; with the current one: 204", async () => {
    const group = await newGroup("ETag delete");
    const changed = await patch(`/Groups/${group.id}`, replace("displayName", "ETag delete 2"));
    expect((await call("DELETE", `/Groups/${group.id}`, { "if-match": group.etag })).statusCode).toBe(412);
    expect((await scim(t, c, "GET", `/Groups/${group.id}`)).statusCode).toBe(200);
    expect((await call("DELETE", `/Groups/${group.id}`, { "if-match": etag(changed) })).statusCode).toBe(204);
    expect((await scim(t, c, "GET", `/Groups/${group.id}`)).statusCode).toBe(404);
  });

  it("a streamed group (more members than one chunk) carries its ETag and meta.version", async () => {
    const group = await newGroup("ETag streamed");
    const ids = await insertIdentities(t.db, c.organizationId, "etag-streamed", MEMBER_CHUNK + 1);
    // Written past the service on purpose: the GET below must render the version the row holds.
    await sql`insert into group_user_members (group_id, identity_id, organization_id)
      select ${group.id}::uuid, id, ${c.organizationId}::uuid from unnest(${ids}::uuid[]) as id`.execute(t.db);
    const read = await scim(t, c, "GET", `/Groups/${group.id}`);
    expect(read.headers["content-length"]).toBeUndefined();
    expect(read.json().members).toHaveLength(MEMBER_CHUNK + 1);
    expect(etag(read)).toBe(group.etag);
    expect(read.json().meta.version).toBe(group.etag);
  });
});

describe("ServiceProviderConfig", () => {
  it("says etag is supported", async () => {
    expect((await scim(t, c, "GET", "/ServiceProviderConfig")).json().etag).toEqual({ supported: true });
  });
});
