import { describe, expect, it } from "vitest";
import {
  COMMON_ATTRIBUTES,
  ENTERPRISE_USER_SCHEMA,
  GROUP_SCHEMA,
  isKnownSchema,
  RESOURCE_TYPES,
  type ResourceName,
  resolveAttribute,
  SCHEMAS,
  schemasFor,
  USER_SCHEMA,
} from "../../src/scim/schema/registry.js";
import type { AttributeDefinition } from "../../src/scim/schema/types.js";

const schema = (urn: string) => {
  const found = SCHEMAS.find((s) => s.id === urn);
  if (found === undefined) throw new Error(`missing ${urn}`);
  return found;
};
const attr = (urn: string, name: string): AttributeDefinition => {
  const found = schema(urn).attributes.find((a) => a.name === name);
  if (found === undefined) throw new Error(`missing ${name}`);
  return found;
};
const sub = (a: AttributeDefinition, name: string): AttributeDefinition => {
  const found = a.subAttributes?.find((s) => s.name === name);
  if (found === undefined) throw new Error(`missing ${a.name}.${name}`);
  return found;
};

describe("SCHEMAS", () => {
  it("lists the User, Enterprise User and Group schemas", () => {
    expect(SCHEMAS.map((s) => s.id)).toEqual([USER_SCHEMA, ENTERPRISE_USER_SCHEMA, GROUP_SCHEMA]);
    expect(schema(USER_SCHEMA).description).toBe("User Account");
  });

  it("holds every core User attribute and no common attribute", () => {
    expect(schema(USER_SCHEMA).attributes.map((a) => a.name)).toEqual([
      "userName",
      "name",
      "displayName",
      "nickName",
      "profileUrl",
      "title",
      "userType",
      "preferredLanguage",
      "locale",
      "timezone",
      "active",
      "password",
      "emails",
      "phoneNumbers",
      "ims",
      "photos",
      "addresses",
      "groups",
      "entitlements",
      "roles",
      "x509Certificates",
    ]);
    expect(COMMON_ATTRIBUTES.map((a) => a.name)).toEqual(["id", "externalId", "meta"]);
  });

  it.each([
    [USER_SCHEMA, "userName", { required: true, uniqueness: "server", caseExact: false, type: "string" }],
    [USER_SCHEMA, "password", { mutability: "writeOnly", returned: "never" }],
    [USER_SCHEMA, "groups", { mutability: "readOnly", multiValued: true, type: "complex" }],
    [USER_SCHEMA, "active", { type: "boolean", multiValued: false }],
    [USER_SCHEMA, "profileUrl", { type: "reference", referenceTypes: ["external"] }],
    [USER_SCHEMA, "emails", { multiValued: true, type: "complex" }],
    [ENTERPRISE_USER_SCHEMA, "manager", { type: "complex", multiValued: false }],
    [ENTERPRISE_USER_SCHEMA, "employeeNumber", { type: "string", mutability: "readWrite" }],
    [GROUP_SCHEMA, "displayName", { required: true }],
    [GROUP_SCHEMA, "members", { multiValued: true, type: "complex" }],
  ])("%s %s has the RFC 7643 characteristics", (urn, name, expected) => {
    expect(attr(urn, name)).toMatchObject(expected);
  });

  it.each([
    [USER_SCHEMA, "emails", "type", { canonicalValues: ["work", "home", "other"] }],
    [USER_SCHEMA, "phoneNumbers", "type", { canonicalValues: ["work", "home", "mobile", "fax", "pager", "other"] }],
    [USER_SCHEMA, "emails", "primary", { type: "boolean" }],
    [USER_SCHEMA, "photos", "value", { type: "reference", referenceTypes: ["external"] }],
    [USER_SCHEMA, "x509Certificates", "value", { type: "binary" }],
    [USER_SCHEMA, "groups", "$ref", { referenceTypes: ["User", "Group"], mutability: "readOnly" }],
    [USER_SCHEMA, "name", "givenName", { type: "string", mutability: "readWrite" }],
    [ENTERPRISE_USER_SCHEMA, "manager", "displayName", { mutability: "readOnly" }],
    [ENTERPRISE_USER_SCHEMA, "manager", "$ref", { referenceTypes: ["User"] }],
    [GROUP_SCHEMA, "members", "value", { mutability: "immutable" }],
    [GROUP_SCHEMA, "members", "display", { mutability: "readOnly" }],
    [GROUP_SCHEMA, "members", "type", { canonicalValues: ["User", "Group"] }],
  ])("%s %s.%s has the RFC 7643 characteristics", (urn, name, subName, expected) => {
    expect(sub(attr(urn, name), subName)).toMatchObject(expected);
  });

  it("serialises without undefined characteristics", () => {
    const json = JSON.parse(JSON.stringify(attr(USER_SCHEMA, "userName"))) as Record<string, unknown>;
    expect(Object.keys(json).sort()).toEqual(
      [
        "caseExact",
        "description",
        "maxLength",
        "multiValued",
        "mutability",
        "name",
        "required",
        "returned",
        "type",
        "uniqueness",
      ].sort(),
    );
  });
});

describe("RESOURCE_TYPES", () => {
  it("declares /Users with the optional enterprise extension and /Groups", () => {
    expect(RESOURCE_TYPES).toEqual([
      expect.objectContaining({
        id: "User",
        endpoint: "/Users",
        schema: USER_SCHEMA,
        schemaExtensions: [{ schema: ENTERPRISE_USER_SCHEMA, required: false }],
      }),
      expect.objectContaining({ id: "Group", endpoint: "/Groups", schema: GROUP_SCHEMA, schemaExtensions: [] }),
    ]);
  });

  it("schemasFor lists the core schema first", () => {
    expect(schemasFor("User").map((s) => s.id)).toEqual([USER_SCHEMA, ENTERPRISE_USER_SCHEMA]);
    expect(schemasFor("Group").map((s) => s.id)).toEqual([GROUP_SCHEMA]);
  });

  it.each<[ResourceName, string, boolean]>([
    ["User", USER_SCHEMA, true],
    ["User", USER_SCHEMA.toUpperCase(), true],
    ["User", ENTERPRISE_USER_SCHEMA.toLowerCase(), true],
    ["User", GROUP_SCHEMA, false],
    ["Group", GROUP_SCHEMA, true],
    ["Group", ENTERPRISE_USER_SCHEMA, false],
    ["User", "urn:example:custom:1.0:User", false],
  ])("isKnownSchema(%s, %s) is %s", (resource, urn, known) => {
    expect(isKnownSchema(resource, urn)).toBe(known);
  });
});

describe("resolveAttribute", () => {
  it.each<[ResourceName, string, string, string]>([
    ["User", "userName", USER_SCHEMA, "userName"],
    ["User", "USERNAME", USER_SCHEMA, "userName"],
    ["User", "name.givenName", USER_SCHEMA, "name.givenName"],
    ["User", "Name.GivenName", USER_SCHEMA, "name.givenName"],
    ["User", "emails.value", USER_SCHEMA, "emails.value"],
    ["User", "id", USER_SCHEMA, "id"],
    ["User", "externalId", USER_SCHEMA, "externalId"],
    ["User", "meta.lastModified", USER_SCHEMA, "meta.lastModified"],
    ["User", `${USER_SCHEMA}:name.givenName`, USER_SCHEMA, "name.givenName"],
    ["User", `${USER_SCHEMA.toLowerCase()}:userName`, USER_SCHEMA, "userName"],
    ["User", `${ENTERPRISE_USER_SCHEMA}:manager`, ENTERPRISE_USER_SCHEMA, "manager"],
    ["User", `${ENTERPRISE_USER_SCHEMA}:manager.value`, ENTERPRISE_USER_SCHEMA, "manager.value"],
    ["User", `${ENTERPRISE_USER_SCHEMA}:EmployeeNumber`, ENTERPRISE_USER_SCHEMA, "employeeNumber"],
    ["User", "manager", ENTERPRISE_USER_SCHEMA, "manager"],
    ["User", "manager.value", ENTERPRISE_USER_SCHEMA, "manager.value"],
    ["User", "department", ENTERPRISE_USER_SCHEMA, "department"],
    ["Group", "displayname", GROUP_SCHEMA, "displayName"],
    ["Group", "members.value", GROUP_SCHEMA, "members.value"],
    ["Group", `${GROUP_SCHEMA}:members`, GROUP_SCHEMA, "members"],
    ["Group", "externalId", GROUP_SCHEMA, "externalId"],
  ])("%s %s → %s %s", (resource, path, expectedSchema, canonicalName) => {
    const resolved = resolveAttribute(resource, path);
    expect(resolved?.schema).toBe(expectedSchema);
    expect(resolved?.canonicalName).toBe(canonicalName);
  });

  it("returns the attribute and sub-attribute definitions", () => {
    const resolved = resolveAttribute("User", `${ENTERPRISE_USER_SCHEMA}:manager.displayName`);
    expect(resolved?.attribute.name).toBe("manager");
    expect(resolved?.sub?.name).toBe("displayName");
    expect(resolved?.sub?.mutability).toBe("readOnly");
    expect(resolveAttribute("User", "title")?.sub).toBeUndefined();
  });

  it.each<[ResourceName, string]>([
    ["User", "nope"],
    ["User", "name.nope"],
    ["User", "name.givenName.extra"],
    ["User", "name."],
    ["User", ""],
    ["User", "members"],
    ["User", `${GROUP_SCHEMA}:displayName`],
    ["User", `${ENTERPRISE_USER_SCHEMA}:userName`],
    ["User", "urn:example:custom:1.0:User:userName"],
    ["User", ENTERPRISE_USER_SCHEMA],
    ["Group", "userName"],
    ["Group", "manager"],
    ["Group", `${USER_SCHEMA}:displayName`],
  ])("%s %s does not resolve", (resource, path) => {
    expect(resolveAttribute(resource, path)).toBeUndefined();
  });
});
