import { describe, expect, it } from "vitest";
import { CONTOSO_EXTENSION, CONTOSO_URN } from "../helpers/extensions.js";
import { idpBody } from "../helpers/idp-fixtures.js";
import { scim } from "../helpers/seed.js";
import { ENTERPRISE_SCHEMA, PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/** Entra custom attributes mapped to an extension URN: create, URN-qualified PATCH (path and path-less), projection. */
const { t, c: entra } = useTestApp({ seed: { extensions: [CONTOSO_EXTENSION] } });
let n = 0;
/** PATCH /Users/{id} with an IdP's recorded body, filled in. */
const patchWith = (id: string, fixture: string, fill: Record<string, string>) =>
  scim(t, entra, "PATCH", `/Users/${id}`, idpBody(fixture, fill));

const values = () => {
  n++;
  return { userName: `entra.user${n}@contoso.example`, costCenterCode: `CCC-${n}`, employeeBadge: `EB-${n}` };
};
async function created(v = values()) {
  const res = await scim(t, entra, "POST", "/Users", idpBody("entra-create-user-custom", v));
  expect(res.statusCode, res.body).toBe(201);
  return { v, user: res.json() };
}

describe("Entra custom attributes", () => {
  it("create stores the extension beside the enterprise one, both in schemas", async () => {
    const { v, user } = await created();
    expect(user.schemas).toEqual([USER_SCHEMA, ENTERPRISE_SCHEMA, CONTOSO_URN]);
    expect(user[CONTOSO_URN]).toEqual({ costCenterCode: v.costCenterCode, employeeBadge: v.employeeBadge });
    expect(user[ENTERPRISE_SCHEMA]).toEqual({ department: "Sales" });
  });

  it("PATCH with a URN-qualified path (op Add) sets the attribute", async () => {
    const { user } = await created();
    const res = await patchWith(user.id, "entra-patch-custom-attribute", { costCenterCode: "NEW-1" });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()[CONTOSO_URN].costCenterCode).toBe("NEW-1");
    const read = await scim(t, entra, "GET", `/Users/${user.id}`);
    expect(read.json()[CONTOSO_URN].costCenterCode).toBe("NEW-1");
  });

  it("path-less Replace with URN-qualified keys (Entra's form) sets core and extension attributes together", async () => {
    const { user } = await created();
    const res = await patchWith(user.id, "entra-patch-custom-pathless", {
      costCenterCode: "PL-1",
      employeeBadge: `PL-${n}`,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ displayName: "Pvlo", name: { givenName: "Gtfd" } });
    expect(res.json()[CONTOSO_URN]).toEqual({ costCenterCode: "PL-1", employeeBadge: `PL-${n}` });
  });

  it("PATCH reaches a complex attribute's sub-attribute, removes attributes, and the emptied extension leaves schemas", async () => {
    const { user } = await created();
    const patch = (Operations: unknown[]) =>
      scim(t, entra, "PATCH", `/Users/${user.id}`, {
        schemas: [PATCH_OP],
        Operations,
      });
    const sub = await patch([{ op: "add", path: `${CONTOSO_URN}:homeSite.floor`, value: 4 }]);
    expect(sub.statusCode, sub.body).toBe(200);
    expect(sub.json()[CONTOSO_URN].homeSite).toEqual({ floor: 4 });
    const badType = await patch([{ op: "add", path: `${CONTOSO_URN}:homeSite.floor`, value: "fourth" }]);
    expect(badType.statusCode).toBe(400);
    const unknown = await patch([{ op: "add", path: `${CONTOSO_URN}:nope`, value: "x" }]);
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().scimType).toBe("invalidPath");
    const removed = await patch([{ op: "remove", path: CONTOSO_URN }]);
    expect(removed.statusCode, removed.body).toBe(200);
    expect(removed.json()[CONTOSO_URN]).toBeUndefined();
    expect(removed.json().schemas).toEqual([USER_SCHEMA, ENTERPRISE_SCHEMA]);
  });

  it("attributes and excludedAttributes select inside the extension; returned never stays out", async () => {
    const { v, user } = await created();
    await scim(t, entra, "PATCH", `/Users/${user.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "add", path: `${CONTOSO_URN}:secretNote`, value: "kept but never returned" }],
    });
    const only = await scim(t, entra, "GET", `/Users/${user.id}?attributes=${CONTOSO_URN}:costCenterCode`);
    expect(only.json()).toEqual({
      schemas: [USER_SCHEMA, ENTERPRISE_SCHEMA, CONTOSO_URN],
      id: user.id,
      [CONTOSO_URN]: { costCenterCode: v.costCenterCode },
    });
    const without = await scim(t, entra, "GET", `/Users/${user.id}?excludedAttributes=${CONTOSO_URN}`);
    expect(without.json()[CONTOSO_URN]).toBeUndefined();
    expect(without.json().userName).toBe(v.userName);
    const whole = await scim(t, entra, "GET", `/Users/${user.id}`);
    expect(whole.json()[CONTOSO_URN]).toEqual({ costCenterCode: v.costCenterCode, employeeBadge: v.employeeBadge });
    const listed = await scim(t, entra, "GET", `/Users?filter=${encodeURIComponent(`userName eq "${v.userName}"`)}`);
    expect(listed.json().Resources[0]).toEqual(whole.json());
  });

  it("filters on the mapped attribute as a matching attribute would", async () => {
    const { v, user } = await created();
    const res = await scim(
      t,
      entra,
      "GET",
      `/Users?filter=${encodeURIComponent(`${CONTOSO_URN}:costCenterCode eq "${v.costCenterCode}"`)}`,
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().totalResults).toBe(1);
    expect(res.json().Resources[0].id).toBe(user.id);
  });
});
