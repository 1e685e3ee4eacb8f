import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/suite.js";
import { CONTOSO_GROUP_EXTENSION, CONTOSO_GROUP_URN } from "../helpers/extensions.js";
import { FULL_GROUP_PATCH, memberIds, patchGroup } from "../helpers/groups.js";
import { GROUP_SCHEMA } from "../helpers/constants.js";
import { idpBody } from "../helpers/idp-fixtures.js";
import { insertIdentity } from "../helpers/identities.js";
import { scim, seedClient } from "../helpers/seed.js";

/**
 * Custom Group extensions (docs/scim-extensions.md), as Entra sends custom group attributes: create, read, PATCH
 * with URN-qualified paths and path-less URN keys, PUT resets, projection, validation through the schema registry.
 */
const URN = CONTOSO_GROUP_URN;
const {
  t,
  clients: { entra, required },
} = useTestApp({
  clients: {
    entra: { extensions: [CONTOSO_GROUP_EXTENSION], ...FULL_GROUP_PATCH },
    required: { extensions: [{ ...CONTOSO_GROUP_EXTENSION, required: true }], ...FULL_GROUP_PATCH },
  },
});
let n = 0;

/** A group created from Entra's fixture, with values no other test uses. */
async function created() {
  const i = ++n;
  const v = { displayName: `Sales ${i}`, externalId: `ext-${i}`, costCenterCode: `CC-${i}`, groupCode: `G-${i}` };
  const res = await scim(t, entra, "POST", "/Groups", idpBody("entra-group-create-custom", v));
  if (res.statusCode !== 201) throw new Error(`group create failed: ${res.statusCode} ${res.body}`);
  return { v, group: res.json() };
}

/** A PATCH of a group with an IdP fixture's body. */
const patchedWith = (id: string, fixture: string, values: Record<string, string>) =>
  scim(t, entra, "PATCH", `/Groups/${id}`, idpBody(fixture, values));

describe("Entra custom group attributes", () => {
  it("create stores the extension; its URN joins schemas, Entra's ADSCIM URN is tolerated and not kept", async () => {
    const { v, group } = await created();
    expect(group.schemas).toEqual([GROUP_SCHEMA, URN]);
    expect(group[URN]).toEqual({ costCenterCode: v.costCenterCode, groupCode: v.groupCode });
    const read = await scim(t, entra, "GET", `/Groups/${group.id}`);
    expect(read.json()).toEqual(group);
    const keys = Object.keys(read.json());
    expect(keys.indexOf(URN)).toBeLessThan(keys.indexOf("meta"));
    expect(keys.indexOf(URN)).toBeGreaterThan(keys.indexOf("displayName"));
  });

  it("PATCH with a URN-qualified path (op Replace) sets the attribute", async () => {
    const { v, group } = await created();
    const res = await patchedWith(group.id, "entra-group-patch-custom-attribute", { costCenterCode: "NEW-1" });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()[URN]).toEqual({ costCenterCode: "NEW-1", groupCode: v.groupCode });
    expect((await scim(t, entra, "GET", `/Groups/${group.id}`)).json()[URN].costCenterCode).toBe("NEW-1");
  });

  it("path-less Replace with URN-qualified keys (Entra's form) sets displayName and the attribute together", async () => {
    const { group } = await created();
    const res = await patchedWith(group.id, "entra-group-patch-custom-pathless", {
      displayName: "Renamed",
      costCenterCode: "NEW-2",
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ displayName: "Renamed", [URN]: { costCenterCode: "NEW-2" } });
  });

  it("PATCH reaches the extension as a whole URN value, removes one attribute, and removes the last one", async () => {
    const { v, group } = await created();
    const added = await patchGroup(t, entra, group.id, [
      { op: "add", path: URN, value: { mailEnabled: "True", owners: [{ value: "o1", display: "Owner" }] } },
    ]);
    expect(added.statusCode, added.body).toBe(200);
    expect(added.json()[URN]).toEqual({
      costCenterCode: v.costCenterCode,
      groupCode: v.groupCode,
      mailEnabled: true,
      owners: [{ value: "o1", display: "Owner" }],
    });
    const removed = await patchGroup(t, entra, group.id, [
      { op: "remove", path: `${URN}:mailEnabled` },
      { op: "remove", path: `${URN}:owners` },
      { op: "remove", path: `${URN}:groupCode` },
    ]);
    expect(removed.json()[URN]).toEqual({ costCenterCode: v.costCenterCode });
    const gone = await patchGroup(t, entra, group.id, [{ op: "remove", path: `${URN}:costCenterCode` }]);
    expect(gone.statusCode, gone.body).toBe(200);
    expect(gone.json()[URN]).toBeUndefined();
    expect(gone.json().schemas).toEqual([GROUP_SCHEMA]);
  });

  it("a member PATCH and Okta's path-less rename leave the extension as it is", async () => {
    const { v, group } = await created();
    const user = await insertIdentity(t.db, entra.organizationId, `member${n}@contoso.example`);
    const members = await patchGroup(t, entra, group.id, [{ op: "add", path: "members", value: [{ value: user }] }]);
    expect(members.statusCode, members.body).toBe(200);
    expect(await memberIds(t, entra, group.id)).toEqual([user]);
    const renamed = await patchedWith(group.id, "okta-group-rename", { group: group.id });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()[URN]).toEqual({ costCenterCode: v.costCenterCode, groupCode: v.groupCode });
  });

  it("PUT replaces the extension: what the body leaves out is removed", async () => {
    const { group } = await created();
    const put = await scim(t, entra, "PUT", `/Groups/${group.id}`, {
      schemas: [GROUP_SCHEMA, URN],
      displayName: group.displayName,
      [URN]: { mailEnabled: false },
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()[URN]).toEqual({ mailEnabled: false });
    const bare = await scim(t, entra, "PUT", `/Groups/${group.id}`, { displayName: group.displayName });
    expect(bare.json()[URN]).toBeUndefined();
    expect(bare.json().schemas).toEqual([GROUP_SCHEMA]);
    expect((await scim(t, entra, "GET", `/Groups/${group.id}`)).json()[URN]).toBeUndefined();
  });

  it("attributes and excludedAttributes work on the extension and its attributes", async () => {
    const { v, group } = await created();
    const only = await scim(t, entra, "GET", `/Groups/${group.id}?attributes=${URN}:costCenterCode`);
    expect(only.json()).toEqual({
      schemas: [GROUP_SCHEMA, URN],
      id: group.id,
      [URN]: { costCenterCode: v.costCenterCode },
    });
    const whole = await scim(t, entra, "GET", `/Groups/${group.id}?attributes=displayName,${URN}`);
    expect(whole.json()[URN]).toEqual({ costCenterCode: v.costCenterCode, groupCode: v.groupCode });
    const without = await scim(t, entra, "GET", `/Groups/${group.id}?excludedAttributes=${URN}`);
    expect(without.json()[URN]).toBeUndefined();
    expect(without.json().displayName).toBe(v.displayName);
    const less = await scim(
      t,
      entra,
      "GET",
      `/Groups?excludedAttributes=${URN}:groupCode&filter=displayName eq "${v.displayName}"`,
    );
    expect(less.json().Resources[0][URN]).toEqual({ costCenterCode: v.costCenterCode });
  });

  it("an attribute returned never is stored but not returned", async () => {
    const { group } = await created();
    const res = await patchGroup(t, entra, group.id, [{ op: "add", path: `${URN}:internalNote`, value: "secret" }]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()[URN].internalNote).toBeUndefined();
    const asked = await scim(t, entra, "GET", `/Groups/${group.id}?attributes=${URN}:internalNote`);
    expect(asked.json()[URN]).toBeUndefined();
  });
});

describe("validation through the schema registry", () => {
  const body = (extension: Record<string, unknown>) => ({
    schemas: [GROUP_SCHEMA, URN],
    displayName: `Checked ${++n}`,
    [URN]: extension,
  });

  it("types are checked; string booleans are accepted", async () => {
    const bad = await scim(t, entra, "POST", "/Groups", body({ mailEnabled: "maybe" }));
    expect(bad.statusCode).toBe(400);
    expect(bad.json().scimType).toBe("invalidSyntax");
    const notDate = await scim(t, entra, "POST", "/Groups", body({ createdOn: "yesterday" }));
    expect(notDate.statusCode).toBe(400);
    expect(notDate.json().detail).toMatch(/createdOn must be a dateTime/);
    const ok = await scim(t, entra, "POST", "/Groups", body({ mailEnabled: "True" }));
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json()[URN]).toEqual({ mailEnabled: true });
  });

  it("an immutable attribute may be set once, then not changed (400 mutability)", async () => {
    const res = await scim(t, entra, "POST", "/Groups", body({ createdOn: "2024-05-01T09:30:00Z" }));
    const id = res.json().id;
    const change = await patchGroup(t, entra, id, [
      { op: "replace", path: `${URN}:createdOn`, value: "2025-01-01T00:00:00Z" },
    ]);
    expect(change.statusCode).toBe(400);
    expect(change.json().scimType).toBe("mutability");
    const put = await scim(t, entra, "PUT", `/Groups/${id}`, { displayName: "Still here" });
    expect(put.statusCode).toBe(400);
    expect(put.json().scimType).toBe("mutability");
  });

  it("an undeclared URN is 400, as a body key and in schemas", async () => {
    const key = await scim(t, entra, "POST", "/Groups", {
      displayName: "x",
      "urn:acme:undeclared:1.0:group": { a: 1 },
    });
    expect(key.statusCode).toBe(400);
    expect(key.json().detail).toMatch(/unsupported schema urn:acme:undeclared:1.0:group for a Group/);
    const listed = await scim(t, entra, "POST", "/Groups", {
      schemas: [GROUP_SCHEMA, "urn:acme:other"],
      displayName: "x",
    });
    expect(listed.statusCode).toBe(400);
  });

  it("a required extension must be present on create and stay on PUT", async () => {
    const missing = await scim(t, required, "POST", "/Groups", { displayName: "No extension" });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().detail).toMatch(/extension:Contoso:2.0:Group is required/);
    const ok = await scim(t, required, "POST", "/Groups", { displayName: "With", [URN]: { costCenterCode: "C" } });
    expect(ok.statusCode, ok.body).toBe(201);
    const put = await scim(t, required, "PUT", `/Groups/${ok.json().id}`, { displayName: "With" });
    expect(put.statusCode).toBe(400);
  });

  it("a User extension's URN is not a Group's", async () => {
    const users = await seedClient(t, {
      extensions: [{ ...CONTOSO_GROUP_EXTENSION, schema: "urn:acme:user:1.0", resource: "User" }],
    });
    const res = await scim(t, users, "POST", "/Groups", { displayName: "x", "urn:acme:user:1.0": { groupCode: "1" } });
    expect(res.statusCode).toBe(400);
  });
});
