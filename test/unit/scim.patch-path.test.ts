import { describe, expect, it } from "vitest";
import type { ScimError } from "../../src/scim/errors.js";
import { parsePatchPath } from "../../src/scim/patch/path.js";
import {
  ENTERPRISE_USER_SCHEMA,
  GROUP_SCHEMA,
  type ResourceName,
  USER_SCHEMA,
} from "../../src/scim/schema/registry.js";
import { scimErrorOf } from "../helpers/errors.js";

const shape = (resource: ResourceName, path: string) => {
  const parsed = parsePatchPath(resource, path);
  return { schema: parsed.schema, attribute: parsed.attribute, filter: parsed.filter, sub: parsed.sub };
};

const errorOf = (resource: ResourceName, path: string): ScimError =>
  scimErrorOf(() => parsePatchPath(resource, path), `expected ${path} to be rejected`);

describe("parsePatchPath accepts", () => {
  it.each<[ResourceName, string, ReturnType<typeof shape>]>([
    ["User", "userName", { schema: USER_SCHEMA, attribute: "userName", filter: undefined, sub: undefined }],
    ["User", "USERNAME", { schema: USER_SCHEMA, attribute: "userName", filter: undefined, sub: undefined }],
    ["User", " active ", { schema: USER_SCHEMA, attribute: "active", filter: undefined, sub: undefined }],
    ["User", "name.givenName", { schema: USER_SCHEMA, attribute: "name", filter: undefined, sub: "givenName" }],
    [
      "User",
      `${USER_SCHEMA}:name.familyName`,
      { schema: USER_SCHEMA, attribute: "name", filter: undefined, sub: "familyName" },
    ],
    [
      "User",
      `${ENTERPRISE_USER_SCHEMA}:manager`,
      { schema: ENTERPRISE_USER_SCHEMA, attribute: "manager", filter: undefined, sub: undefined },
    ],
    [
      "User",
      `${ENTERPRISE_USER_SCHEMA.toLowerCase()}:manager.value`,
      { schema: ENTERPRISE_USER_SCHEMA, attribute: "manager", filter: undefined, sub: "value" },
    ],
    [
      "User",
      "manager.value",
      { schema: ENTERPRISE_USER_SCHEMA, attribute: "manager", filter: undefined, sub: "value" },
    ],
    [
      "User",
      'emails[type eq "work"]',
      { schema: USER_SCHEMA, attribute: "emails", filter: [{ attribute: "type", value: "work" }], sub: undefined },
    ],
    [
      "User",
      'emails[type eq "work"].value',
      { schema: USER_SCHEMA, attribute: "emails", filter: [{ attribute: "type", value: "work" }], sub: "value" },
    ],
    [
      "User",
      'addresses[TYPE EQ "work"].Locality',
      { schema: USER_SCHEMA, attribute: "addresses", filter: [{ attribute: "type", value: "work" }], sub: "locality" },
    ],
    [
      "User",
      `${USER_SCHEMA}:phoneNumbers[type eq "mobile"].value`,
      {
        schema: USER_SCHEMA,
        attribute: "phoneNumbers",
        filter: [{ attribute: "type", value: "mobile" }],
        sub: "value",
      },
    ],
    [
      "User",
      "emails[primary eq true]",
      { schema: USER_SCHEMA, attribute: "emails", filter: [{ attribute: "primary", value: true }], sub: undefined },
    ],
    [
      "User",
      'emails[primary eq "False"].type',
      { schema: USER_SCHEMA, attribute: "emails", filter: [{ attribute: "primary", value: false }], sub: "type" },
    ],
    [
      "User",
      'emails[type eq "work" and primary eq true].value',
      {
        schema: USER_SCHEMA,
        attribute: "emails",
        filter: [
          { attribute: "type", value: "work" },
          { attribute: "primary", value: true },
        ],
        sub: "value",
      },
    ],
    [
      "User",
      'emails[value eq "a]b \\"q\\""].type',
      { schema: USER_SCHEMA, attribute: "emails", filter: [{ attribute: "value", value: 'a]b "q"' }], sub: "type" },
    ],
    [
      "Group",
      'members[value eq "2819c223-7f76-453a-919d-413861904646"]',
      {
        schema: GROUP_SCHEMA,
        attribute: "members",
        filter: [{ attribute: "value", value: "2819c223-7f76-453a-919d-413861904646" }],
        sub: undefined,
      },
    ],
    [
      "Group",
      `${GROUP_SCHEMA}:displayName`,
      { schema: GROUP_SCHEMA, attribute: "displayName", filter: undefined, sub: undefined },
    ],
    ["Group", "externalId", { schema: GROUP_SCHEMA, attribute: "externalId", filter: undefined, sub: undefined }],
  ])("%s %s", (resource, path, expected) => {
    expect(shape(resource, path)).toEqual(expected);
  });

  it("carries the registry definitions", () => {
    const parsed = parsePatchPath("User", 'emails[type eq "work"].primary');
    expect(parsed.definition.name).toBe("emails");
    expect(parsed.subDefinition?.type).toBe("boolean");
  });
});

describe("parsePatchPath rejects", () => {
  it.each<[ResourceName, string, string | undefined]>([
    ["User", "", "invalidPath"],
    ["User", "nope", "invalidPath"],
    ["User", "name.nope", "invalidPath"],
    ["User", "name.givenName.more", "invalidPath"],
    ["User", "name..givenName", "invalidPath"],
    ["User", "1name", "invalidPath"],
    ["User", "emails[", "invalidPath"],
    ["User", 'emails[type eq "work"', "invalidPath"],
    ["User", 'emails[type eq "work]', "invalidPath"],
    ["User", "emails[]", "invalidPath"],
    ["User", "emails[type]", "invalidPath"],
    ["User", 'emails[type co "w"]', "invalidPath"],
    ["User", 'emails[type ne "w"]', "invalidPath"],
    ["User", "emails[type pr]", "invalidPath"],
    ["User", 'emails[type eq "w" or type eq "h"]', "invalidPath"],
    ["User", 'emails[(type eq "w")]', "invalidPath"],
    ["User", "emails[type eq work]", "invalidPath"],
    ["User", 'emails[nope eq "w"]', "invalidPath"],
    ["User", 'emails[type eq "w"].nope', "invalidPath"],
    ["User", 'emails[type eq "w"]value', "invalidPath"],
    ["User", 'emails[type eq "w"].value.more', "invalidPath"],
    ["User", 'emails.value[type eq "w"]', "invalidPath"],
    ["User", 'name[givenName eq "x"]', "invalidPath"],
    ["User", 'userName[value eq "x"]', "invalidPath"],
    ["User", "members", "invalidPath"],
    ["User", ENTERPRISE_USER_SCHEMA, "invalidPath"],
    ["User", `${ENTERPRISE_USER_SCHEMA}:userName`, "invalidPath"],
    ["Group", "userName", "invalidPath"],
    ["Group", "manager", "invalidPath"],
    ["User", "urn:example:custom:1.0:User:costCenter", undefined],
    ["User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:Group:department", undefined],
    ["User", `${GROUP_SCHEMA}:displayName`, undefined],
    ["Group", `${ENTERPRISE_USER_SCHEMA}:manager`, undefined],
    ["Group", `${USER_SCHEMA}:emails[type eq "work"].value`, undefined],
  ])("%s %s → 400 %s", (resource, path, scimType) => {
    const error = errorOf(resource, path);
    expect(error.status).toBe(400);
    expect(error.scimType).toBe(scimType);
  });

  it("says why an unsupported schema was refused", () => {
    expect(errorOf("User", "urn:example:custom:1.0:User:x").detail).toContain("unsupported schema");
  });
});
