import { describe, expect, it } from "vitest";
import { type EqFilter, parseFilter, type ResourceKind } from "../../src/scim/query/filter.js";
import cases from "../fixtures/filter-cases.json" with { type: "json" };
import { scimErrorOf } from "../helpers/errors.js";

interface ValidCase {
  name: string;
  kind: ResourceKind;
  filter: string;
  attribute: EqFilter["attribute"];
  value: string;
}
interface InvalidCase {
  name: string;
  kind: ResourceKind;
  filter: string;
  detail: string;
}

const valid = cases.valid as ValidCase[];
const invalid = cases.invalid as InvalidCase[];

describe("parseFilter accepts the eq subset", () => {
  it.each(valid)("$name: $kind $filter", ({ kind, filter, attribute, value }) => {
    expect(parseFilter(kind, filter)).toEqual({ attribute, value });
  });
});

describe("parseFilter rejects everything else with invalidFilter", () => {
  it.each(invalid)("$name: $kind $filter", ({ kind, filter, detail }) => {
    const err = scimErrorOf(() => parseFilter(kind, filter));
    expect(err.status).toBe(400);
    expect(err.scimType).toBe("invalidFilter");
    expect(err.detail).toContain(detail);
  });

  it.each([
    ["User", "supported attributes for User: userName, externalId, employeeNumber, groups.value"],
    ["Group", "supported attributes for Group: displayName, externalId"],
  ] as const)("every %s error names the supported attributes", (kind, list) => {
    for (const c of invalid.filter((x) => x.kind === kind)) {
      expect(scimErrorOf(() => parseFilter(kind, c.filter)).detail, c.name).toContain(list);
    }
  });
});

describe("groups.value must be a UUID", () => {
  it.each([
    'groups.value eq "not-a-uuid"',
    'groups.value eq ""',
    'groups.value eq "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4"',
    'groups.value eq "6f1c2a9e3b4d4e5f8a7b9c0d1e2f3a4b"',
    'groups.value eq "{6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b}"',
    'urn:ietf:params:scim:schemas:core:2.0:User:groups.value eq "42"',
  ])("%s", (filter) => {
    const err = scimErrorOf(() => parseFilter("User", filter));
    expect(err.scimType).toBe("invalidFilter");
    expect(err.detail).toBe("the filter value for groups.value must be a valid UUID");
  });
});

describe("filter length limit (1024 bytes)", () => {
  const prefix = 'userName eq "';
  const atLimit = `${prefix}${"a".repeat(1024 - prefix.length - 1)}"`;

  it.each([
    ["ASCII at exactly 1024 bytes", atLimit, true],
    ["ASCII at 1025 bytes", `${atLimit} `, false],
    ["multi-byte text under 1024 characters but over 1024 bytes", `${prefix}${"é".repeat(510)}"`, false],
    ["multi-byte text at 1024 bytes", `${prefix}${"é".repeat(505)}"`, true],
  ] as const)("%s", (_name, filter, ok) => {
    if (ok) {
      expect(parseFilter("User", filter).attribute).toBe("userName");
    } else {
      const err = scimErrorOf(() => parseFilter("User", filter));
      expect(err.scimType).toBe("invalidFilter");
      expect(err.detail).toContain("longer than 1024 bytes");
    }
  });
});
