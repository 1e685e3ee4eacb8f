import { describe, expect, it } from "vitest";
import { createGroup, memberIds, type ScimMember, sorted } from "../helpers/groups.js";
import { insertIdentity } from "../helpers/identities.js";
import { type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { GROUP_SCHEMA, PATCH_OP, PUBLIC_URL, USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

const ENTRA_SCHEMA = "http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group";
const { t, c } = useTestApp({ seed: true });

/** POST /Groups of a group with this externalId, through `client`; the answer as it comes. */
const postWithExternalId = (client: SeededClient, displayName: string, externalId: string) =>
  scim(t, client, "POST", "/Groups", { schemas: [GROUP_SCHEMA], displayName, externalId });

describe("POST /Groups", () => {
  it("creates a group: 201, Location, meta, no members key when there are none", async () => {
    const res = await scim(t, c, "POST", "/Groups", { schemas: [GROUP_SCHEMA], displayName: "Engineering" });
    expect(res.statusCode).toBe(201);
    expect(res.headers["content-type"]).toMatch(/^application\/scim\+json/);
    const body = res.json();
    expect(body).toEqual({
      schemas: [GROUP_SCHEMA],
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      displayName: "Engineering",
      meta: {
        resourceType: "Group",
        created: t.clock.now().toISOString(),
        lastModified: t.clock.now().toISOString(),
        location: `${PUBLIC_URL}/scim/${c.clientId}/v2/Groups/${body.id}`,
        version: 'W/"0"',
      },
    });
    expect(res.headers.location).toBe(body.meta.location);
    expect(res.headers.etag).toBe('W/"0"');
  });

  it("creates a group with user members and resolves their display names", async () => {
    const alice = await insertIdentity(t.db, c.organizationId, "alice@example.com");
    const bob = await insertIdentity(t.db, c.organizationId, "bob@example.com");
    const body = await createGroup(t, c, "Admins", {
      externalId: "ext-admins",
      members: [{ value: alice }, { value: bob, type: "User", display: "ignored" }],
    });
    expect(body.externalId).toBe("ext-admins");
    const base = `${PUBLIC_URL}/scim/${c.clientId}/v2`;
    expect(body.members).toEqual(
      [
        { value: alice, display: "alice@example.com", type: "User", $ref: `${base}/Users/${alice}` },
        { value: bob, display: "bob@example.com", type: "User", $ref: `${base}/Users/${bob}` },
      ].sort((a, b) => a.value.localeCompare(b.value)),
    );
  });

  it("accepts Entra's extra schema URN", async () => {
    const res = await scim(t, c, "POST", "/Groups", {
      schemas: [GROUP_SCHEMA, ENTRA_SCHEMA],
      displayName: "From Entra",
      externalId: "entra-1",
      members: [],
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().schemas).toEqual([GROUP_SCHEMA]);
  });

  it.each([
    ["an unknown schema URN", { schemas: [GROUP_SCHEMA, "urn:example:custom:Group"], displayName: "x" }],
    ["a User schema", { schemas: [USER_SCHEMA], displayName: "x" }],
    ["an unknown extension object", { schemas: [GROUP_SCHEMA], displayName: "x", "urn:example:ext": { a: 1 } }],
    ["no displayName", { schemas: [GROUP_SCHEMA] }],
    ["a null displayName", { schemas: [GROUP_SCHEMA], displayName: null }],
    ["a JSON array body", [{ displayName: "x" }]],
  ])("rejects %s: 400 invalidSyntax", async (_name, body) => {
    const res = await scim(t, c, "POST", "/Groups", body);
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidSyntax");
  });

  it.each([
    ["an empty displayName", { displayName: "  " }],
    ["a numeric displayName", { displayName: 7 }],
    ["a numeric externalId", { displayName: "x", externalId: 7 }],
    ["a NUL in displayName", { displayName: "a\u0000b" }],
  ])("rejects %s: 400 invalidValue", async (_name, body) => {
    const res = await scim(t, c, "POST", "/Groups", { schemas: [GROUP_SCHEMA], ...body });
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidValue");
  });

  it("refuses a duplicate externalId in the organization: 409 uniqueness; case-sensitive", async () => {
    await createGroup(t, c, "One", { externalId: "dup-ext" });
    const res = await postWithExternalId(c, "Two", "dup-ext");
    expect(res.statusCode).toBe(409);
    expect(res.json().scimType).toBe("uniqueness");
    const other = await postWithExternalId(c, "Two", "DUP-EXT");
    expect(other.statusCode).toBe(201);
  });

  it("allows the same externalId in another organization", async () => {
    await createGroup(t, c, "Org A", { externalId: "shared-ext" });
    const other = await seedClient(t);
    const res = await postWithExternalId(other, "Org B", "shared-ext");
    expect(res.statusCode).toBe(201);
  });

  it("ignores read-only id and meta in the body", async () => {
    const body = await createGroup(t, c, "Ignored ids", {
      id: "11111111-1111-4111-8111-111111111111",
      meta: { resourceType: "User" },
    });
    expect(body.id).not.toBe("11111111-1111-4111-8111-111111111111");
    expect((body.meta as { resourceType: string }).resourceType).toBe("Group");
  });
});

describe("GET /Groups/{id}", () => {
  it("returns the group as created", async () => {
    const created = await createGroup(t, c, "Readable", { externalId: "r-1" });
    const res = await scim(t, c, "GET", `/Groups/${created.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(created);
  });

  it.each(["00000000-0000-4000-8000-000000000000", "not-a-uuid"])("answers 404 for %s", async (id) => {
    const res = await scim(t, c, "GET", `/Groups/${id}`);
    expect(res.statusCode).toBe(404);
    expect(res.json().schemas).toEqual(["urn:ietf:params:scim:api:messages:2.0:Error"]);
  });
});

describe("PUT /Groups/{id} (RFC 7644 §3.5.1)", () => {
  it("replaces displayName, externalId and the whole member list", async () => {
    const [a, b, d] = await Promise.all(
      ["put-a", "put-b", "put-d"].map((u) => insertIdentity(t.db, c.organizationId, u)),
    );
    const created = await createGroup(t, c, "Before", { externalId: "before", members: [{ value: a }, { value: b }] });
    t.clock.advance(1000);
    const res = await scim(t, c, "PUT", `/Groups/${created.id}`, {
      schemas: [GROUP_SCHEMA],
      id: created.id,
      displayName: "After",
      members: [{ value: b }, { value: d }],
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.displayName).toBe("After");
    expect(body.externalId).toBeUndefined();
    expect((body.members as ScimMember[]).map((m) => m.value).sort()).toEqual(sorted([b as string, d as string]));
    expect(body.meta.lastModified).toBe(t.clock.now().toISOString());
    expect(body.meta.created).toBe((created.meta as { created: string }).created);
    expect(await memberIds(t, c, created.id)).toEqual(sorted([b as string, d as string]));
  });

  it("leaves lastModified alone when nothing changes", async () => {
    const a = await insertIdentity(t.db, c.organizationId, "put-same");
    const created = await createGroup(t, c, "Same", { members: [{ value: a }] });
    t.clock.advance(1000);
    const res = await scim(t, c, "PUT", `/Groups/${created.id}`, {
      schemas: [GROUP_SCHEMA],
      displayName: "Same",
      members: [{ value: a, display: "whatever" }],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().meta.lastModified).toBe((created.meta as { lastModified: string }).lastModified);
  });

  it("answers 404 for an unknown group and 409 for another group's externalId", async () => {
    const missing = await scim(t, c, "PUT", "/Groups/00000000-0000-4000-8000-000000000000", {
      schemas: [GROUP_SCHEMA],
      displayName: "x",
    });
    expect(missing.statusCode).toBe(404);
    await createGroup(t, c, "Holder", { externalId: "held" });
    const other = await createGroup(t, c, "Taker");
    const res = await scim(t, c, "PUT", `/Groups/${other.id}`, {
      schemas: [GROUP_SCHEMA],
      displayName: "Taker",
      externalId: "held",
    });
    expect(res.statusCode).toBe(409);
    expect(res.json().scimType).toBe("uniqueness");
  });
});

describe("DELETE /Groups/{id}", () => {
  it("deletes: 204, then 404; its memberships go with it", async () => {
    const a = await insertIdentity(t.db, c.organizationId, "del-a");
    const child = await createGroup(t, c, "Child");
    const parent = await createGroup(t, c, "Parent", { members: [{ value: child.id }] });
    const doomed = await createGroup(t, c, "Doomed", { members: [{ value: a }, { value: child.id }] });
    await scim(t, c, "PATCH", `/Groups/${parent.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "add", path: "members", value: [{ value: doomed.id }] }],
    });
    const res = await scim(t, c, "DELETE", `/Groups/${doomed.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe("");
    expect((await scim(t, c, "GET", `/Groups/${doomed.id}`)).statusCode).toBe(404);
    expect((await scim(t, c, "DELETE", `/Groups/${doomed.id}`)).statusCode).toBe(404);
    expect(await memberIds(t, c, parent.id)).toEqual([child.id]);
    const left = await t.db
      .selectFrom("group_user_members")
      .select("identity_id")
      .where("group_id", "=", doomed.id)
      .execute();
    expect(left).toEqual([]);
  });
});

describe("methods", () => {
  it.each([
    ["DELETE", "/Groups"],
    ["PUT", "/Groups"],
    ["POST", "/Groups/00000000-0000-4000-8000-000000000000"],
  ] as const)("%s %s is 405", async (method, path) => {
    const res = await scim(t, c, method, path, method === "DELETE" ? undefined : {});
    expect(res.statusCode).toBe(405);
    expect(res.headers["content-type"]).toMatch(/^application\/scim\+json/);
  });
});
