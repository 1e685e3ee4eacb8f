import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/suite.js";
import { CONTOSO_GROUP_EXTENSION, CONTOSO_GROUP_URN } from "../helpers/extensions.js";
import { patchGroup } from "../helpers/groups.js";
import { adminCall, type SeededClient, scim, seedClient } from "../helpers/seed.js";

/**
 * Filterable and unique Group extension attributes (docs/scim-extensions.md): `eq` filters on /Groups, case rules,
 * 409 uniqueness within the organization, and groups written before an attribute became indexed.
 */
const URN = CONTOSO_GROUP_URN;
const {
  t,
  clients: { c },
} = useTestApp({ clients: { c: { extensions: [CONTOSO_GROUP_EXTENSION] } } });
let n = 0;

async function group(client: SeededClient, extension: Record<string, unknown>) {
  const res = await scim(t, client, "POST", "/Groups", { displayName: `Filtered ${++n}`, [URN]: extension });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string };
}
const found = async (client: SeededClient, filter: string) => {
  const res = await scim(t, client, "GET", `/Groups?filter=${encodeURIComponent(filter)}`);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().Resources as { id: string }[]).map((g) => g.id);
};

describe("eq filters on Group extension attributes", () => {
  it("URN-qualified and bare names; a caseExact: false attribute matches in any case", async () => {
    const a = await group(c, { costCenterCode: "Berlin-7" });
    await group(c, { costCenterCode: "Paris-1" });
    expect(await found(c, `${URN}:costCenterCode eq "berlin-7"`)).toEqual([a.id]);
    expect(await found(c, `costCenterCode eq "BERLIN-7"`)).toEqual([a.id]);
    const res = await scim(t, c, "GET", `/Groups?filter=${encodeURIComponent(`costCenterCode eq "berlin-7"`)}`);
    expect(res.json().totalResults).toBe(1);
  });

  it("a caseExact attribute matches its exact case only", async () => {
    const a = await group(c, { groupCode: "Exact-1" });
    expect(await found(c, `${URN}:groupCode eq "Exact-1"`)).toEqual([a.id]);
    expect(await found(c, `${URN}:groupCode eq "exact-1"`)).toEqual([]);
  });

  it("a PATCH moves the group in the index; a removed value is no longer found", async () => {
    const a = await group(c, { costCenterCode: "Old-3" });
    await patchGroup(t, c, a.id, [{ op: "replace", path: `${URN}:costCenterCode`, value: "New-3" }]);
    expect(await found(c, `costCenterCode eq "old-3"`)).toEqual([]);
    expect(await found(c, `costCenterCode eq "new-3"`)).toEqual([a.id]);
    await patchGroup(t, c, a.id, [{ op: "remove", path: `${URN}:costCenterCode` }]);
    expect(await found(c, `costCenterCode eq "new-3"`)).toEqual([]);
  });

  it("an attribute that is neither filterable nor unique is 400 invalidFilter; so is a Group one on /Users", async () => {
    const res = await scim(t, c, "GET", `/Groups?filter=${encodeURIComponent(`${URN}:mailEnabled eq "true"`)}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidFilter");
    const users = await scim(t, c, "GET", `/Users?filter=${encodeURIComponent(`${URN}:costCenterCode eq "x"`)}`);
    expect(users.statusCode).toBe(400);
  });
});

describe("uniqueness: server", () => {
  it("a value another group of the organization holds is 409 uniqueness, on create, PATCH and PUT", async () => {
    await group(c, { groupCode: "U-1" });
    const clash = await scim(t, c, "POST", "/Groups", { displayName: "Second", [URN]: { groupCode: "U-1" } });
    expect(clash.statusCode).toBe(409);
    expect(clash.json().scimType).toBe("uniqueness");
    const other = await group(c, { groupCode: "U-2" });
    const patched = await patchGroup(t, c, other.id, [{ op: "replace", path: `${URN}:groupCode`, value: "U-1" }]);
    expect(patched.statusCode).toBe(409);
    expect(patched.json().scimType).toBe("uniqueness");
    const put = await scim(t, c, "PUT", `/Groups/${other.id}`, { displayName: "Second", [URN]: { groupCode: "U-1" } });
    expect(put.statusCode).toBe(409);
    expect((await scim(t, c, "GET", `/Groups/${other.id}`)).json()[URN]).toEqual({ groupCode: "U-2" });
  });

  it("the same value in another case (caseExact) and in another organization is free", async () => {
    await group(c, { groupCode: "U-3" });
    await group(c, { groupCode: "u-3" });
    const elsewhere = await seedClient(t, { extensions: [CONTOSO_GROUP_EXTENSION] });
    await group(elsewhere, { groupCode: "U-3" });
  });

  it("a freed value can be taken again", async () => {
    const a = await group(c, { groupCode: "U-4" });
    await patchGroup(t, c, a.id, [{ op: "remove", path: `${URN}:groupCode` }]);
    await group(c, { groupCode: "U-4" });
  });
});

describe("a declaration that changes", () => {
  it("groups written before an attribute became filterable are found once it is", async () => {
    const plain = {
      ...CONTOSO_GROUP_EXTENSION,
      attributes: CONTOSO_GROUP_EXTENSION.attributes.map((a) => ({ ...a, filterable: false, uniqueness: "none" })),
    };
    const later = await seedClient(t, { extensions: [plain] });
    const a = await group(later, { costCenterCode: "Before-1" });
    const refused = await scim(t, later, "GET", `/Groups?filter=${encodeURIComponent(`costCenterCode eq "before-1"`)}`);
    expect(refused.statusCode).toBe(400);
    const changed = await adminCall(t, "PATCH", `/scimClients/${later.clientId}?update_mask=extensions`, {
      extensions: [CONTOSO_GROUP_EXTENSION],
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(await found(later, `costCenterCode eq "before-1"`)).toEqual([a.id]);
  });
});
