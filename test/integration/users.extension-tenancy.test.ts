import { describe, expect, it } from "vitest";
import { CONTOSO_EXTENSION, CONTOSO_URN, OKTA_EXTENSION, OKTA_URN } from "../helpers/extensions.js";
import { scim } from "../helpers/seed.js";
import { PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/** Two clients of one organization with different extensions share the users, not each other's extensions. */
const {
  t,
  clients: { okta, entra },
} = useTestApp({
  clients: { okta: { extensions: [OKTA_EXTENSION] }, entra: { extensions: [CONTOSO_EXTENSION] } },
  sameOrganization: true,
});

describe("two clients of one organization", () => {
  it("each reads the shared user without the other's extension, in the body and in schemas", async () => {
    const created = await scim(t, okta, "POST", "/Users", {
      userName: "shared1@acme.example",
      [OKTA_URN]: { costCode: "CC-shared" },
    });
    const id = created.json().id;
    const seen = await scim(t, entra, "GET", `/Users/${id}`);
    expect(seen.statusCode).toBe(200);
    expect(seen.json()[OKTA_URN]).toBeUndefined();
    expect(seen.json().schemas).toEqual([USER_SCHEMA]);
    const listed = await scim(
      t,
      entra,
      "GET",
      `/Users?filter=${encodeURIComponent('userName eq "shared1@acme.example"')}`,
    );
    expect(listed.json().Resources[0]).toEqual(seen.json());
    expect((await scim(t, okta, "GET", `/Users/${id}`)).json()[OKTA_URN]).toEqual({ costCode: "CC-shared" });
  });

  it("neither can write, filter on or discover the other's URN", async () => {
    const body = { userName: "shared2@acme.example", [CONTOSO_URN]: { costCenterCode: "x" } };
    const write = await scim(t, okta, "POST", "/Users", body);
    expect(write.statusCode).toBe(400);
    const filter = await scim(
      t,
      okta,
      "GET",
      `/Users?filter=${encodeURIComponent(`${CONTOSO_URN}:costCenterCode eq "x"`)}`,
    );
    expect(filter.statusCode).toBe(400);
    expect((await scim(t, okta, "GET", `/Schemas/${CONTOSO_URN}`)).statusCode).toBe(404);
  });

  it("a PUT or PATCH by one keeps the other's extension on the user", async () => {
    const id = (
      await scim(t, okta, "POST", "/Users", { userName: "shared3@acme.example", [OKTA_URN]: { costCode: "CC-3" } })
    ).json().id;
    const put = await scim(t, entra, "PUT", `/Users/${id}`, {
      userName: "shared3@acme.example",
      [CONTOSO_URN]: { costCenterCode: "E-3" },
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json().schemas).toEqual([USER_SCHEMA, CONTOSO_URN]);
    const patch = await scim(t, entra, "PATCH", `/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "displayName", value: "Three" }],
    });
    expect(patch.statusCode, patch.body).toBe(200);
    const fromOkta = (await scim(t, okta, "GET", `/Users/${id}`)).json();
    expect(fromOkta[OKTA_URN]).toEqual({ costCode: "CC-3" });
    expect(fromOkta[CONTOSO_URN]).toBeUndefined();
    expect(fromOkta.schemas).toEqual([USER_SCHEMA, OKTA_URN]);
    expect(fromOkta.displayName).toBe("Three");
    const okFilter = await scim(t, okta, "GET", `/Users?filter=${encodeURIComponent('costCode eq "CC-3"')}`);
    expect(okFilter.json().totalResults).toBe(1);
  });
});
