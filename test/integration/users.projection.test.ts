import { describe, expect, it } from "vitest";
import { scim } from "../helpers/seed.js";
import { ENTERPRISE_SCHEMA, PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/** attributes / excludedAttributes on every response that returns a user. */
const { t, c } = useTestApp({ seed: true });
let n = 0;

const body = () => ({
  schemas: [USER_SCHEMA, ENTERPRISE_SCHEMA],
  userName: `proj${++n}@example.com`,
  displayName: "Dee",
  name: { givenName: "G", familyName: "F" },
  emails: [{ value: `proj${n}@example.com`, type: "work" }],
  [ENTERPRISE_SCHEMA]: { department: "Ops", costCenter: "C" },
});
const keys = (o: Record<string, unknown>) => Object.keys(o).sort();

describe("projection", () => {
  it("POST ?attributes=userName returns id, schemas and userName only", async () => {
    const res = await scim(t, c, "POST", "/Users?attributes=userName", body());
    expect(res.statusCode).toBe(201);
    expect(keys(res.json())).toEqual(["id", "schemas", "userName"]);
  });

  it("GET ?excludedAttributes drops the listed attributes, sub-attributes and extension fields", async () => {
    const user = (await scim(t, c, "POST", "/Users", body())).json();
    const res = await scim(
      t,
      c,
      "GET",
      `/Users/${user.id}?excludedAttributes=emails,name.familyName,${ENTERPRISE_SCHEMA}:department`,
    );
    expect(res.json().emails).toBeUndefined();
    expect(res.json().name).toEqual({ givenName: "G" });
    expect(res.json()[ENTERPRISE_SCHEMA]).toEqual({ costCenter: "C" });
    expect(res.json().displayName).toBe("Dee");
  });

  it("never drops id or schemas", async () => {
    const user = (await scim(t, c, "POST", "/Users", body())).json();
    const res = await scim(t, c, "GET", `/Users/${user.id}?excludedAttributes=id,schemas,userName`);
    expect(res.json().id).toBe(user.id);
    expect(res.json().schemas).toEqual([USER_SCHEMA, ENTERPRISE_SCHEMA]);
    expect(res.json().userName).toBeUndefined();
  });

  it("applies to PUT and PATCH, with case-insensitive and URN-qualified names", async () => {
    const user = (await scim(t, c, "POST", "/Users", body())).json();
    const put = await scim(t, c, "PUT", `/Users/${user.id}?attributes=DISPLAYNAME`, {
      ...body(),
      userName: user.userName,
    });
    expect(keys(put.json())).toEqual(["displayName", "id", "schemas"]);
    const patch = await scim(t, c, "PATCH", `/Users/${user.id}?attributes=${ENTERPRISE_SCHEMA}:department`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "title", value: "T" }],
    });
    expect(patch.json()).toEqual({
      schemas: [USER_SCHEMA, ENTERPRISE_SCHEMA],
      id: user.id,
      [ENTERPRISE_SCHEMA]: { department: "Ops" },
    });
  });

  it("both parameters at once are 400 on POST, GET, PUT and PATCH, and POST writes nothing", async () => {
    const both = "attributes=userName&excludedAttributes=emails";
    const created = body();
    expect((await scim(t, c, "POST", `/Users?${both}`, created)).statusCode).toBe(400);
    const rows = await t.db.selectFrom("identities").select("id").where("user_name", "=", created.userName).execute();
    expect(rows).toHaveLength(0);
    const user = (await scim(t, c, "POST", "/Users", body())).json();
    expect((await scim(t, c, "GET", `/Users/${user.id}?${both}`)).statusCode).toBe(400);
    expect(
      (await scim(t, c, "PUT", `/Users/${user.id}?${both}`, { ...body(), userName: user.userName })).statusCode,
    ).toBe(400);
    const patch = await scim(t, c, "PATCH", `/Users/${user.id}?${both}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "title", value: "T" }],
    });
    expect(patch.statusCode).toBe(400);
  });
});
