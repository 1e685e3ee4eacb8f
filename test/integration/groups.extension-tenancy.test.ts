import { beforeEach, describe, expect, it } from "vitest";
import { CONTOSO_GROUP_EXTENSION, CONTOSO_GROUP_URN } from "../helpers/extensions.js";
import { FULL_GROUP_PATCH, patchGroup } from "../helpers/groups.js";
import { GROUP_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";
import { scim } from "../helpers/seed.js";

/**
 * Two clients of one organization with different Group extensions share the groups, not each other's extensions
 * (responses, filters, PUT/PATCH, webhook `raw`); a client with `unknown_extensions: "store"` keeps what it sends.
 */
const OTHER_URN = "urn:okta:acme:1.0:group";
const OTHER_EXTENSION = {
  schema: OTHER_URN,
  name: "AcmeGroup",
  resource: "Group",
  attributes: [{ name: "region", type: "string", filterable: true }],
};
const KEPT_URN = "urn:acme:undeclared:1.0:group";
const {
  t,
  clients: { entra, okta, keeper },
} = useTestApp({
  recording: true,
  clients: {
    entra: { extensions: [CONTOSO_GROUP_EXTENSION], ...FULL_GROUP_PATCH },
    okta: { extensions: [OTHER_EXTENSION], ...FULL_GROUP_PATCH },
    keeper: { unknown_extensions: "store", ...FULL_GROUP_PATCH },
  },
  sameOrganization: true,
});
beforeEach(async () => t.recorder.clear());

async function shared(name: string) {
  const res = await scim(t, entra, "POST", "/Groups", {
    displayName: name,
    [CONTOSO_GROUP_URN]: { costCenterCode: name },
  });
  expect(res.statusCode, res.body).toBe(201);
  const id = res.json().id as string;
  const patched = await patchGroup(t, okta, id, [{ op: "add", path: `${OTHER_URN}:region`, value: "emea" }]);
  expect(patched.statusCode, patched.body).toBe(200);
  return { id, seenByOkta: patched.json() };
}

describe("two clients of one organization", () => {
  it("each reads the shared group with its own extension only, in the body and in schemas", async () => {
    const { id, seenByOkta } = await shared("Shared 1");
    expect(seenByOkta.schemas).toEqual([GROUP_SCHEMA, OTHER_URN]);
    expect(seenByOkta[CONTOSO_GROUP_URN]).toBeUndefined();
    const seenByEntra = (await scim(t, entra, "GET", `/Groups/${id}`)).json();
    expect(seenByEntra.schemas).toEqual([GROUP_SCHEMA, CONTOSO_GROUP_URN]);
    expect(seenByEntra[OTHER_URN]).toBeUndefined();
    expect(seenByEntra[CONTOSO_GROUP_URN]).toEqual({ costCenterCode: "Shared 1" });
  });

  it("one client's PUT and PATCH keep the other's extension", async () => {
    const { id } = await shared("Shared 2");
    const put = await scim(t, okta, "PUT", `/Groups/${id}`, { displayName: "Shared 2b" });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()[OTHER_URN]).toBeUndefined();
    const byEntra = (await scim(t, entra, "GET", `/Groups/${id}`)).json();
    expect(byEntra).toMatchObject({ displayName: "Shared 2b", [CONTOSO_GROUP_URN]: { costCenterCode: "Shared 2" } });
    await patchGroup(t, entra, id, [{ op: "replace", value: { displayName: "Shared 2c" } }]);
    await patchGroup(t, okta, id, [{ op: "add", path: `${OTHER_URN}:region`, value: "apac" }]);
    expect((await scim(t, entra, "GET", `/Groups/${id}`)).json()[CONTOSO_GROUP_URN]).toEqual({
      costCenterCode: "Shared 2",
    });
  });

  it("a client cannot filter on the other's attribute; its own matches in any case", async () => {
    await shared("Shared 3");
    const res = await scim(t, entra, "GET", `/Groups?filter=${encodeURIComponent(`${OTHER_URN}:region eq "emea"`)}`);
    expect(res.statusCode).toBe(400);
    const found = await scim(t, okta, "GET", `/Groups?filter=${encodeURIComponent(`region eq "EMEA"`)}`);
    expect(found.json().totalResults).toBeGreaterThan(0);
  });

  it("webhook raw carries the extension objects the writing client sees", async () => {
    const { id } = await shared("Shared 4");
    const events = await t.recorder.events();
    const created = events.find((e) => e.kind === "group.created" && e.resourceId === id);
    expect(created?.data.raw).toEqual({
      schemas: [GROUP_SCHEMA, CONTOSO_GROUP_URN],
      id,
      displayName: "Shared 4",
      [CONTOSO_GROUP_URN]: { costCenterCode: "Shared 4" },
    });
    const updated = events.find((e) => e.kind === "group.updated" && e.resourceId === id);
    expect(updated?.clientId).toBe(okta.clientId);
    expect(updated?.data.raw).toEqual({
      schemas: [GROUP_SCHEMA, OTHER_URN],
      id,
      displayName: "Shared 4",
      [OTHER_URN]: { region: "emea" },
    });
  });

  it("a PATCH that changes nothing records no event", async () => {
    const { id } = await shared("Shared 5");
    await t.recorder.clear();
    const same = await patchGroup(t, okta, id, [{ op: "add", path: `${OTHER_URN}:region`, value: "emea" }]);
    expect(same.statusCode).toBe(200);
    expect(await t.recorder.events()).toEqual([]);
  });
});

describe('unknown_extensions: "store"', () => {
  it("an undeclared URN's object is kept verbatim, returned, patched and reset by PUT", async () => {
    const created = await scim(t, keeper, "POST", "/Groups", {
      schemas: [GROUP_SCHEMA, KEPT_URN],
      displayName: "Kept",
      [KEPT_URN]: { anything: { nested: [1, 2] }, flag: "yes" },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().schemas).toEqual([GROUP_SCHEMA, KEPT_URN]);
    expect(created.json()[KEPT_URN]).toEqual({ anything: { nested: [1, 2] }, flag: "yes" });
    const id = created.json().id;
    const patched = await patchGroup(t, keeper, id, [{ op: "replace", path: `${KEPT_URN}:flag`, value: "no" }]);
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()[KEPT_URN]).toEqual({ anything: { nested: [1, 2] }, flag: "no" });
    const filter = await scim(t, keeper, "GET", `/Groups?filter=${encodeURIComponent(`${KEPT_URN}:flag eq "no"`)}`);
    expect(filter.statusCode).toBe(400);
    const put = await scim(t, keeper, "PUT", `/Groups/${id}`, { displayName: "Kept" });
    expect(put.json()[KEPT_URN]).toBeUndefined();
  });

  it("the declaring clients do not see what another client kept", async () => {
    const created = await scim(t, keeper, "POST", "/Groups", { displayName: "Kept 2", [KEPT_URN]: { a: 1 } });
    const seen = (await scim(t, entra, "GET", `/Groups/${created.json().id}`)).json();
    expect(seen[KEPT_URN]).toBeUndefined();
    expect(seen.schemas).toEqual([GROUP_SCHEMA]);
  });
});
