import { beforeAll, describe, expect, it } from "vitest";
import { createGroup, memberIds, patchGroup } from "../helpers/groups.js";
import { insertIdentity } from "../helpers/identities.js";
import { adminCall, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { GROUP_SCHEMA, PATCH_OP } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/** A resource of another organization answers as if it did not exist. */
const { t } = useTestApp();
let mine: SeededClient;
let theirs: SeededClient;
let sibling: SeededClient;
let group: { id: string } & Record<string, unknown>;
let user: string;

beforeAll(async () => {
  mine = await seedClient(t);
  theirs = await seedClient(t);
  // A second client of the same organization sees the same groups.
  const created = await adminCall(t, "POST", "/scimClients", {
    organization_id: mine.organizationId,
    secret: "sibling-secret",
  });
  const clientId = created.json().client_id as string;
  sibling = {
    organizationId: mine.organizationId,
    clientId,
    secret: "sibling-secret",
    base: `/scim/${clientId}/v2`,
    headers: { authorization: "Bearer sibling-secret", "content-type": "application/scim+json" },
  };
  user = await insertIdentity(t.db, mine.organizationId, "tenant-user");
  group = await createGroup(t, mine, "Private", { externalId: "private-ext", members: [{ value: user }] });
});

describe("another organization's client", () => {
  it.each([
    ["GET", undefined],
    ["PUT", { schemas: [GROUP_SCHEMA], displayName: "Hijacked" }],
    ["PATCH", { schemas: [PATCH_OP], Operations: [{ op: "remove", path: "members" }] }],
    ["DELETE", undefined],
  ] as const)("%s /Groups/{id} is 404", async (method, body) => {
    const res = await scim(t, theirs, method, `/Groups/${group.id}`, body);
    expect(res.statusCode).toBe(404);
    const still = (await scim(t, mine, "GET", `/Groups/${group.id}`)).json();
    expect(still.displayName).toBe("Private");
    expect(still.members).toHaveLength(1);
  });

  it("does not list the group, by filter or otherwise", async () => {
    const all = (await scim(t, theirs, "GET", "/Groups")).json();
    expect(all.totalResults).toBe(0);
    const byExt = (
      await scim(t, theirs, "GET", `/Groups?filter=${encodeURIComponent('externalId eq "private-ext"')}`)
    ).json();
    expect(byExt.totalResults).toBe(0);
    const cursor = (await scim(t, theirs, "GET", "/Groups?cursor=")).json();
    expect(cursor.Resources).toEqual([]);
  });

  it("cannot nest the group into its own groups", async () => {
    const theirGroup = await createGroup(t, theirs, "Theirs");
    const res = await patchGroup(t, theirs, theirGroup.id, [
      { op: "add", path: "members", value: [{ value: group.id }] },
    ]);
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidValue");
    expect(await memberIds(t, theirs, theirGroup.id)).toEqual([]);
  });
});

describe("another client of the same organization", () => {
  it("sees and changes the same groups, with its own base URL in meta.location", async () => {
    const res = await scim(t, sibling, "GET", `/Groups/${group.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().meta.location).toContain(`/scim/${sibling.clientId}/v2/Groups/${group.id}`);
    expect(res.json().members[0].$ref).toContain(`/scim/${sibling.clientId}/v2/Users/${user}`);
  });
});
