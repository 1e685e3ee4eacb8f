import { describe, expect, it } from "vitest";
import { idpBody } from "../helpers/fixtures.js";
import { scim } from "../helpers/seed.js";
import { ENTERPRISE_SCHEMA, PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/** One test per PATCH tolerance (docs/scim-users.md), with real Entra and Okta bodies. */
const { t, c } = useTestApp({ seed: true });
let n = 0;

async function createUser(body: Record<string, unknown> = {}) {
  const res = await scim(t, c, "POST", "/Users", {
    schemas: [USER_SCHEMA],
    userName: `tol${++n}@example.com`,
    name: { givenName: "Ann", familyName: "Lee" },
    emails: [{ value: `tol${n}@example.com`, type: "work", primary: true }],
    ...body,
  });
  expect(res.statusCode).toBe(201);
  return res.json();
}

const patch = (id: string, body: unknown) => scim(t, c, "PATCH", `/Users/${id}`, body);

/** A fresh user PATCHed with the IdP's body of `fixture` (test/fixtures/idp/); fails unless 200. */
async function patchedWith(fixture: string) {
  const user = await createUser();
  const res = await patch(user.id, idpBody(fixture));
  expect(res.statusCode).toBe(200);
  return { user, res };
}
const ops = (...operations: unknown[]) => ({ schemas: [PATCH_OP], Operations: operations });

describe("Entra ID", () => {
  it("creates a user from Entra's create body", async () => {
    const body = { ...idpBody("entra-create-user"), userName: `entra${++n}@example.com` };
    const res = await scim(t, c, "POST", "/Users", body);
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ externalId: "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef", active: true });
    expect(res.json().roles).toBeUndefined();
  });

  it('accepts a capitalised op with a string boolean ("Replace" active "False")', async () => {
    const { user, res } = await patchedWith("entra-patch-active-string");
    expect(res.json().active).toBe(false);
    const back = await patch(user.id, ops({ op: "Replace", path: "active", value: "True" }));
    expect(back.json().active).toBe(true);
  });

  it("replaces through a value-filter path and a sub-attribute path", async () => {
    const { res } = await patchedWith("entra-patch-multi-valued");
    expect(res.json().emails).toEqual([{ value: "updatedEmail@microsoft.com", type: "work", primary: true }]);
    expect(res.json().name).toEqual({ givenName: "Ann", familyName: "updatedFamilyName" });
  });

  it("applies a pathless replace with dotted keys and a URN-qualified key", async () => {
    const { res } = await patchedWith("entra-patch-replace-multiple");
    expect(res.json()).toMatchObject({
      displayName: "Pvlo",
      name: { givenName: "Gtfd", familyName: "Pkqf" },
      externalId: "Eqpj",
      [ENTERPRISE_SCHEMA]: { employeeNumber: "Eqpj" },
    });
    expect(res.json().schemas).toEqual([USER_SCHEMA, ENTERPRISE_SCHEMA]);
  });

  it("creates the element when add's value filter matches nothing (work phone)", async () => {
    const { res } = await patchedWith("entra-patch-add-work-phone");
    expect(res.json().phoneNumbers).toEqual([{ type: "work", value: "+1 (425) 555-0100" }]);
  });

  it("accepts a bare string manager on the URN-qualified manager path", async () => {
    const { res } = await patchedWith("entra-patch-manager");
    expect(res.json()[ENTERPRISE_SCHEMA]).toEqual({ manager: { value: "271" } });
  });

  it("sets an enterprise attribute through its URN-qualified path", async () => {
    const { res } = await patchedWith("entra-patch-department");
    expect(res.json()[ENTERPRISE_SCHEMA]).toEqual({ department: "Sales" });
  });

  it("accepts a URN-keyed extension object in a pathless add", async () => {
    const user = await createUser();
    const res = await patch(
      user.id,
      ops({ op: "Add", value: { [ENTERPRISE_SCHEMA]: { costCenter: "CC-9", division: "D" } } }),
    );
    expect(res.statusCode).toBe(200);
    expect(res.json()[ENTERPRISE_SCHEMA]).toEqual({ costCenter: "CC-9", division: "D" });
  });

  it("resolves attribute names case-insensitively in paths", async () => {
    const user = await createUser();
    const res = await patch(user.id, ops({ op: "replace", path: "NAME.GIVENNAME", value: "Zed" }));
    expect(res.statusCode).toBe(200);
    expect(res.json().name.givenName).toBe("Zed");
  });
});

describe("Okta", () => {
  it("creates a user from Okta's create body (with groups [] and a password)", async () => {
    const body = { ...idpBody("okta-create-user"), userName: `okta${++n}@example.com`, emails: [] };
    const res = await scim(t, c, "POST", "/Users", body);
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ displayName: "Test User", locale: "en-US", active: true });
    expect(res.json().password).toBeUndefined();
  });

  it("deactivates with a pathless replace of active", async () => {
    const { user, res } = await patchedWith("okta-patch-deactivate");
    expect(res.json().active).toBe(false);
    expect((await scim(t, c, "GET", `/Users/${user.id}`)).json().active).toBe(false);
  });

  it("replaces the password with a pathless replace, never echoing it", async () => {
    const { user, res } = await patchedWith("okta-patch-password");
    expect(res.body).not.toContain("t1meMa$heen");
    const row = await t.db
      .selectFrom("identities")
      .select("password_hash")
      .where("id", "=", user.id)
      .executeTakeFirst();
    expect(row?.password_hash).toMatch(/^\$argon2id\$/);
  });

  it("replaces with Okta's PUT body that carries id, groups and meta", async () => {
    const user = await createUser();
    const body = { ...idpBody("okta-put-user"), userName: user.userName, emails: user.emails };
    const res = await scim(t, c, "PUT", `/Users/${user.id}`, body);
    expect(res.statusCode).toBe(200);
    expect(res.json().id).toBe(user.id);
    expect(res.json().name.givenName).toBe("Another");
  });
});

describe("errors RFC 7644 requires", () => {
  it("replace on a value filter that matches nothing is 400 noTarget", async () => {
    const user = await createUser();
    const res = await patch(
      user.id,
      ops({ op: "replace", path: 'emails[type eq "home"].value', value: "h@example.com" }),
    );
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("noTarget");
  });

  it("remove without a path is 400 noTarget", async () => {
    const user = await createUser();
    const res = await patch(user.id, ops({ op: "remove" }));
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("noTarget");
  });

  it.each([
    ["an unknown attribute is 400 invalidPath", { op: "replace", path: "shoeSize", value: "44" }, "invalidPath"],
    [
      "a path with an unsupported schema is 400 without scimType",
      { op: "replace", path: "urn:example:custom:2.0:User:team", value: "x" },
      undefined,
    ],
    ["a malformed value is 400 invalidValue", { op: "replace", path: "active", value: "maybe" }, "invalidValue"],
  ])("%s", async (_title, operation, scimType) => {
    const user = await createUser();
    const res = await patch(user.id, ops(operation));
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe(scimType);
  });

  it("operations on id, groups and meta are ignored", async () => {
    const user = await createUser();
    const res = await patch(
      user.id,
      ops(
        { op: "replace", path: "id", value: "00000000-0000-4000-8000-000000000000" },
        { op: "add", path: "groups", value: [{ value: "00000000-0000-4000-8000-000000000001" }] },
        { op: "replace", path: "meta.created", value: "2000-01-01T00:00:00Z" },
      ),
    );
    expect(res.statusCode).toBe(200);
    expect(res.json().id).toBe(user.id);
    expect(res.json().groups).toBeUndefined();
    expect(res.json().meta.created).toBe(user.meta.created);
  });
});
