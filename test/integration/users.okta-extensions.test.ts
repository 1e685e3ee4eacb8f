import { describe, expect, it } from "vitest";
import { OKTA_EXTENSION, OKTA_URN } from "../helpers/extensions.js";
import { idpBody } from "../helpers/idp-fixtures.js";
import { adminCall, scim, seedClient } from "../helpers/seed.js";
import { PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/** Okta custom attributes under an external namespace: create, read, GET-then-PUT, filter. */
const { t, c: okta } = useTestApp({ seed: { extensions: [OKTA_EXTENSION] } });
let n = 0;

const unique = () => {
  n++;
  return { userName: `okta.user${n}@acme.example`, costCode: `CC-${n}`, badgeId: `B${n}` };
};

describe("Okta custom attributes", () => {
  it("create keeps the namespace object, typed, with its URN in schemas; GET returns the same", async () => {
    const v = unique();
    const created = await scim(t, okta, "POST", "/Users", idpBody("okta-create-user-custom", v));
    expect(created.statusCode, created.body).toBe(201);
    const user = created.json();
    expect(user.schemas).toEqual([USER_SCHEMA, OKTA_URN]);
    expect(user[OKTA_URN]).toEqual({
      costCode: v.costCode,
      badgeId: v.badgeId,
      isContractor: false,
      startDate: "2024-05-01T09:30:00Z",
    });
    const read = await scim(t, okta, "GET", `/Users/${user.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(user);
    const listed = await scim(t, okta, "GET", `/Users?filter=${encodeURIComponent(`userName eq "${v.userName}"`)}`);
    expect(listed.json().Resources).toEqual([user]);
  });

  it("attribute names and the URN key are case-insensitive in bodies; values are typed by the declaration", async () => {
    const v = unique();
    const created = await scim(t, okta, "POST", "/Users", {
      schemas: [USER_SCHEMA, OKTA_URN],
      userName: v.userName,
      "URN:OKTA:ACME:1.0:USER": { COSTCODE: v.costCode, isContractor: "True", level: 3 },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()[OKTA_URN]).toEqual({ costCode: v.costCode, isContractor: true, level: 3 });
    for (const bad of [{ level: "3" }, { level: 2.5 }, { startDate: "yesterday" }, { costCode: 7 }]) {
      const res = await scim(t, okta, "POST", "/Users", { userName: unique().userName, [OKTA_URN]: bad });
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json().scimType).toBe("invalidSyntax");
    }
  });

  it("Okta's GET-then-PUT replaces the extension: omitted attributes are gone", async () => {
    const v = unique();
    const id = (await scim(t, okta, "POST", "/Users", idpBody("okta-create-user-custom", v))).json().id;
    const put = await scim(
      t,
      okta,
      "PUT",
      `/Users/${id}`,
      idpBody("okta-put-user-custom", { ...v, id, costCode: "CC-new" }),
    );
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()[OKTA_URN]).toEqual({ costCode: "CC-new", badgeId: v.badgeId });
    const { [OKTA_URN]: _dropped, ...withoutExtension } = idpBody("okta-put-user-custom", { ...v, id, costCode: "x" });
    const reset = await scim(t, okta, "PUT", `/Users/${id}`, { ...withoutExtension, schemas: [USER_SCHEMA] });
    expect(reset.json()[OKTA_URN]).toBeUndefined();
    expect(reset.json().schemas).toEqual([USER_SCHEMA]);
  });

  it("eq filters on a filterable attribute, case-insensitively unless caseExact, URN-qualified or not", async () => {
    const v = unique();
    const id = (await scim(t, okta, "POST", "/Users", idpBody("okta-create-user-custom", v))).json().id;
    const find = async (filter: string) => {
      const res = await scim(t, okta, "GET", `/Users?filter=${encodeURIComponent(filter)}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json().Resources.map((u: { id: string }) => u.id);
    };
    expect(await find(`${OKTA_URN}:costCode eq "${v.costCode}"`)).toEqual([id]);
    expect(await find(`${OKTA_URN}:COSTCODE eq "${v.costCode.toLowerCase()}"`)).toEqual([id]);
    expect(await find(`costCode eq "${v.costCode}"`)).toEqual([id]);
    // badgeId is caseExact: another case is another value.
    expect(await find(`${OKTA_URN}:badgeId eq "${v.badgeId}"`)).toEqual([id]);
    expect(await find(`${OKTA_URN}:badgeId eq "${v.badgeId.toLowerCase()}"`)).toEqual([]);
    // Cursor pages and projections take the same filter.
    const cursor = await scim(
      t,
      okta,
      "GET",
      `/Users?cursor=&filter=${encodeURIComponent(`costCode eq "${v.costCode}"`)}`,
    );
    expect(cursor.json().Resources.map((u: { id: string }) => u.id)).toEqual([id]);
    const projected = await scim(
      t,
      okta,
      "GET",
      `/Users?attributes=${OKTA_URN}:costCode&filter=${encodeURIComponent(`costCode eq "${v.costCode}"`)}`,
    );
    expect(projected.json().Resources).toEqual([
      { schemas: [USER_SCHEMA, OKTA_URN], id, [OKTA_URN]: { costCode: v.costCode } },
    ]);
  });

  it("a changed value moves in the index; the old value no longer finds the user", async () => {
    const v = unique();
    const id = (await scim(t, okta, "POST", "/Users", idpBody("okta-create-user-custom", v))).json().id;
    await scim(
      t,
      okta,
      "PUT",
      `/Users/${id}`,
      idpBody("okta-put-user-custom", { ...v, id, costCode: `${v.costCode}-moved` }),
    );
    const count = async (value: string) =>
      (await scim(t, okta, "GET", `/Users?filter=${encodeURIComponent(`costCode eq "${value}"`)}`)).json().totalResults;
    expect(await count(v.costCode)).toBe(0);
    expect(await count(`${v.costCode}-moved`)).toBe(1);
  });

  it("attributes that are not filterable stay invalidFilter", async () => {
    for (const filter of [`${OKTA_URN}:isContractor eq "true"`, `level eq "3"`, `urn:other:1:x eq "1"`]) {
      const res = await scim(t, okta, "GET", `/Users?filter=${encodeURIComponent(filter)}`);
      expect(res.statusCode, filter).toBe(400);
      expect(res.json().scimType).toBe("invalidFilter");
    }
  });

  it("making an attribute filterable later indexes the users that already hold a value", async () => {
    const quiet = OKTA_EXTENSION.attributes.map((a) => ({ name: a.name, type: a.type }));
    const c = await seedClient(t, { extensions: [{ ...OKTA_EXTENSION, attributes: quiet }] });
    const id = (
      await scim(t, c, "POST", "/Users", { userName: "late@acme.example", [OKTA_URN]: { costCode: "Late-1" } })
    ).json().id;
    const filter = `/Users?filter=${encodeURIComponent('costCode eq "late-1"')}`;
    expect((await scim(t, c, "GET", filter)).statusCode).toBe(400);
    const patched = await adminCall(t, "PATCH", `/scimClients/${c.clientId}?update_mask=extensions`, {
      extensions: [OKTA_EXTENSION],
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const found = await scim(t, c, "GET", filter);
    expect(found.statusCode, found.body).toBe(200);
    expect(found.json().Resources.map((u: { id: string }) => u.id)).toEqual([id]);
  });

  it("an immutable attribute is set once; changing or removing it by PUT or PATCH is 400 mutability", async () => {
    const attributes = [...OKTA_EXTENSION.attributes, { name: "hireId", mutability: "immutable" }];
    const c = await seedClient(t, { extensions: [{ ...OKTA_EXTENSION, attributes }] });
    const id = (
      await scim(t, c, "POST", "/Users", { userName: "imm@acme.example", [OKTA_URN]: { costCode: "1" } })
    ).json().id;
    const patch = (value: unknown, op = "replace") =>
      scim(t, c, "PATCH", `/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op, path: `${OKTA_URN}:hireId`, value }],
      });
    expect((await patch("H-1", "add")).statusCode).toBe(200);
    expect((await patch("H-1")).statusCode).toBe(200);
    const changed = await patch("H-2");
    expect(changed.statusCode).toBe(400);
    expect(changed.json().scimType).toBe("mutability");
    expect((await patch(undefined, "remove")).statusCode).toBe(400);
    const put = await scim(t, c, "PUT", `/Users/${id}`, {
      userName: "imm@acme.example",
      [OKTA_URN]: { costCode: "2" },
    });
    expect(put.statusCode).toBe(400);
    const kept = await scim(t, c, "PUT", `/Users/${id}`, {
      userName: "imm@acme.example",
      [OKTA_URN]: { costCode: "2", hireId: "H-1" },
    });
    expect(kept.statusCode, kept.body).toBe(200);
  });
});
