import { describe, expect, it } from "vitest";
import { includes, project } from "../../src/scim/query/projection.js";
import { ENTERPRISE_SCHEMA } from "../helpers/constants.js";

const user = {
  schemas: ["urn:ietf:params:scim:schemas:core:2.0:User", ENTERPRISE_SCHEMA],
  id: "u1",
  userName: "alice",
  name: { givenName: "Alice", familyName: "Smith" },
  emails: [
    { value: "a@x.test", type: "work", primary: true },
    { value: "a@home.test", type: "home" },
  ],
  active: true,
  [ENTERPRISE_SCHEMA]: { department: "R&D", employeeNumber: "7" },
  meta: { resourceType: "User", created: "t0", lastModified: "t1" },
};

describe("project (RFC 7644 section 3.9)", () => {
  it.each([
    ["userName", { schemas: user.schemas, id: "u1", userName: "alice" }],
    ["USERNAME", { schemas: user.schemas, id: "u1", userName: "alice" }],
    ["name.givenName", { schemas: user.schemas, id: "u1", name: { givenName: "Alice" } }],
    ["emails.value", { schemas: user.schemas, id: "u1", emails: [{ value: "a@x.test" }, { value: "a@home.test" }] }],
    [
      `${ENTERPRISE_SCHEMA}:department`,
      { schemas: user.schemas, id: "u1", [ENTERPRISE_SCHEMA]: { department: "R&D" } },
    ],
    [ENTERPRISE_SCHEMA, { schemas: user.schemas, id: "u1", [ENTERPRISE_SCHEMA]: user[ENTERPRISE_SCHEMA] }],
    ["urn:ietf:params:scim:schemas:core:2.0:User:userName", { schemas: user.schemas, id: "u1", userName: "alice" }],
    ["nope", { schemas: user.schemas, id: "u1" }],
    ['emails[type eq "work"]', { schemas: user.schemas, id: "u1", emails: [user.emails[0]] }],
    ['emails[value eq "A@HOME.test"].type', { schemas: user.schemas, id: "u1", emails: [{ type: "home" }] }],
    ['emails[type eq "fax"]', { schemas: user.schemas, id: "u1", emails: [] }],
  ])("attributes=%s", (attr, expected) => {
    expect(project("User", user, { attributes: [attr] })).toEqual(expected);
  });

  it("combines several attributes", () => {
    expect(project("User", user, { attributes: ["userName", "name.familyName", "active"] })).toEqual({
      schemas: user.schemas,
      id: "u1",
      userName: "alice",
      name: { familyName: "Smith" },
      active: true,
    });
  });

  it.each([
    ["emails", (u: Record<string, unknown>) => expect(u.emails).toBeUndefined()],
    ["name.givenName", (u: Record<string, unknown>) => expect(u.name).toEqual({ familyName: "Smith" })],
    [
      `${ENTERPRISE_SCHEMA}:department`,
      (u: Record<string, unknown>) => expect(u[ENTERPRISE_SCHEMA]).toEqual({ employeeNumber: "7" }),
    ],
    ["id", (u: Record<string, unknown>) => expect(u.id).toBe("u1")],
    ["meta", (u: Record<string, unknown>) => expect(u.meta).toBeUndefined()],
  ])("excludedAttributes=%s", (attr, check) => {
    const out = project("User", user, { excludedAttributes: [attr] });
    check(out);
    expect(out.userName).toBe("alice");
  });

  it("does not change its input", () => {
    const copy = structuredClone(user);
    project("User", user, { excludedAttributes: ["name.givenName", `${ENTERPRISE_SCHEMA}:department`] });
    expect(user).toEqual(copy);
  });

  it("returns the resource as is without a projection", () => {
    expect(project("User", user, {})).toBe(user);
  });
});

describe("includes", () => {
  it.each([
    [{}, true],
    [{ excludedAttributes: ["members"] }, false],
    [{ excludedAttributes: ["Members"] }, false],
    [{ excludedAttributes: ["members.display"] }, true],
    [{ attributes: ["displayName"] }, false],
    [{ attributes: ["members"] }, true],
    [{ attributes: ["members.value"] }, true],
  ])("members under %j → %s", (projection, expected) => {
    expect(includes("Group", projection, "members")).toBe(expected);
  });
});
