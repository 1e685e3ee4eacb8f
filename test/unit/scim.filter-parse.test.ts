import { describe, expect, it } from "vitest";
import { parseFilter, type ResourceKind } from "../../src/scim/query/filter.js";
import cases from "../fixtures/filter-cases.json" with { type: "json" };
import { scimErrorOf } from "../helpers/errors.js";
import { showFilter } from "../helpers/filter-text.js";

interface ValidCase {
  name: string;
  kind: ResourceKind;
  filter: string;
  /** The expected tree, as showFilter writes it. */
  ast: string;
}
interface InvalidCase {
  name: string;
  kind: ResourceKind;
  filter: string;
  detail: string;
}

const valid = cases.valid as ValidCase[];
const invalid = cases.invalid as InvalidCase[];

describe("parseFilter reads RFC 7644 §3.4.2.2 filters into a tree", () => {
  it.each(valid)("$name: $kind $filter", ({ kind, filter, ast }) => {
    expect(showFilter(parseFilter(kind, filter))).toBe(ast);
  });
});

describe("parseFilter rejects the rest with invalidFilter", () => {
  it.each(invalid)("$name: $kind $filter", ({ kind, filter, detail }) => {
    const err = scimErrorOf(() => parseFilter(kind, filter));
    expect(err.status).toBe(400);
    expect(err.scimType).toBe("invalidFilter");
    expect(err.detail).toContain(detail);
  });

  it("an attribute that is unknown or not filterable names the filterable ones, read from the schema registry", () => {
    const user = scimErrorOf(() => parseFilter("User", 'password eq "x"')).detail;
    expect(user).toContain("filterable attributes of User: userName, name.formatted");
    expect(user).toContain("emails.value");
    expect(user).toContain("urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber".slice(-14));
    expect(user?.split("filterable attributes of User:")[1]).not.toContain("password");
    const group = scimErrorOf(() => parseFilter("Group", 'userName eq "x"')).detail;
    expect(group).toContain("filterable attributes of Group: displayName, members.value, id, externalId");
    expect(group).not.toContain("members.display");
  });

  it("every grammar error names the operators and forms that are supported", () => {
    const detail = scimErrorOf(() => parseFilter("User", 'userName equals "a"')).detail;
    expect(detail).toContain("supported: eq ne co sw ew gt ge lt le pr, and/or/not");
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
      expect(showFilter(parseFilter("User", filter))).toMatch(/^eq\(userName,/);
    } else {
      const err = scimErrorOf(() => parseFilter("User", filter));
      expect(err.scimType).toBe("invalidFilter");
      expect(err.detail).toContain("longer than 1024 bytes");
    }
  });
});
