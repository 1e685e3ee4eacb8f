import { describe, expect, it } from "vitest";
import { type ListQuery, parseListQuery, parseProjection } from "../../src/scim/query/list-query.js";
import { scimErrorOf } from "../helpers/errors.js";
import { showFilter } from "../helpers/filter-text.js";

const offset = (startIndex: number, count: number): ListQuery["page"] => ({ kind: "offset", startIndex, count });
const cursor = (token: string, count: number): ListQuery["page"] => ({ kind: "cursor", cursor: token, count });

describe("parseListQuery pagination", () => {
  it.each([
    ["defaults", {}, offset(1, 100)],
    ["explicit offset page", { startIndex: "201", count: "50" }, offset(201, 50)],
    ["startIndex 0 is treated as 1", { startIndex: "0" }, offset(1, 100)],
    ["negative startIndex is treated as 1", { startIndex: "-7" }, offset(1, 100)],
    ["startIndex at the limit", { startIndex: "5000" }, offset(5000, 100)],
    ["count 0", { count: "0" }, offset(1, 0)],
    ["negative count is treated as 0", { count: "-3" }, offset(1, 0)],
    ["count at the limit", { count: "1000" }, offset(1, 1000)],
    ["leading plus and zeros", { startIndex: "+007", count: "010" }, offset(7, 10)],
    ["surrounding spaces", { count: " 5 " }, offset(1, 5)],
    ["repeated parameter: the first wins", { count: ["20", "30"] }, offset(1, 20)],
    ["empty cursor starts cursor pagination", { cursor: "" }, cursor("", 100)],
    ["cursor with count", { cursor: "abc", count: "25" }, cursor("abc", 25)],
    ["repeated cursor", { cursor: ["abc", "def"] }, cursor("abc", 100)],
    ["an empty sortBy is absent", { sortBy: " ", sortOrder: "descending" }, offset(1, 100)],
    ["unknown parameters are ignored", { foo: "bar" }, offset(1, 100)],
  ])("%s", (_name, q, page) => {
    expect(parseListQuery("User", q)).toEqual({ page });
  });

  it.each([
    ["startIndex above 5000", { startIndex: "5001" }, "tooMany", "startIndex must be at most 5000"],
    ["huge startIndex", { startIndex: "99999999999999999999999" }, "tooMany", "startIndex"],
    ["count above 1000", { count: "1001" }, "tooMany", "count must be at most 1000"],
    ["count above 1000 with a cursor", { cursor: "", count: "5000" }, "tooMany", "count"],
    ["decimal count", { count: "1.5" }, "invalidValue", "count must be an integer"],
    ["word count", { count: "ten" }, "invalidValue", "count must be an integer"],
    ["empty count", { count: "" }, "invalidValue", "count must be an integer"],
    ["exponent startIndex", { startIndex: "1e3" }, "invalidValue", "startIndex must be an integer"],
    ["hex startIndex", { startIndex: "0x10" }, "invalidValue", "startIndex must be an integer"],
    ["cursor with startIndex", { cursor: "", startIndex: "1" }, "invalidValue", "mutually exclusive"],
    ["non-string parameter", { count: { a: "1" } }, "invalidValue", "count must be a string"],
    ["unknown sortOrder", { sortBy: "userName", sortOrder: "up" }, "invalidValue", 'sortOrder must be "ascending"'],
    ["sortBy an unknown attribute", { sortBy: "shoeSize" }, "invalidValue", "sortable attributes of User: userName"],
    ["sortBy a write-only attribute", { sortBy: "password" }, "invalidValue", 'sortBy "password"'],
    ["sortBy a complex attribute", { sortBy: "name" }, "invalidValue", 'sortBy "name"'],
  ] as const)("%s → 400 %s", (_name, q, scimType, detail) => {
    const err = scimErrorOf(() => parseListQuery("User", q));
    expect(err.status).toBe(400);
    expect(err.scimType).toBe(scimType);
    expect(err.detail).toContain(detail);
  });
});

describe("parseListQuery sortBy (RFC 7644 §3.4.2.3)", () => {
  it.each([
    [{ sortBy: "userName" }, "userName", false],
    [{ sortBy: "USERNAME", sortOrder: "Descending" }, "userName", true],
    [{ sortBy: "name.familyName", sortOrder: "ascending" }, "name.familyName", false],
    [{ sortBy: "emails" }, "emails.value", false],
    [{ sortBy: "meta.lastModified", sortOrder: "descending" }, "meta.lastModified", true],
  ] as const)("%j sorts by %s", (q, path, descending) => {
    const { sort } = parseListQuery("User", q);
    expect(sort?.descending).toBe(descending);
    expect(`${sort?.field.name}${sort?.field.sub === undefined ? "" : `.${sort.field.sub}`}`).toBe(path);
  });
});

describe("parseListQuery filter", () => {
  it.each([
    ["User", 'userName eq "bjensen"', 'eq(userName,"bjensen")'],
    ["Group", 'displayName eq "Ops"', 'eq(displayName,"Ops")'],
    ["User", ['externalId eq "1"', 'externalId eq "2"'], 'eq(externalId,"1")'],
  ] as const)("%s %j", (kind, filter, expected) => {
    const q = parseListQuery(kind, { filter });
    expect(q.filter === undefined ? undefined : showFilter(q.filter)).toBe(expected);
    expect(q.filterText).toBe(Array.isArray(filter) ? filter[0] : filter);
  });

  it.each([
    ["User", ""],
    ["Group", 'userName eq "x"'],
    ["User", 'userName xx "x"'],
  ] as const)("%s %j → invalidFilter", (kind, filter) => {
    expect(scimErrorOf(() => parseListQuery(kind, { filter })).scimType).toBe("invalidFilter");
  });
});

describe("parseProjection (RFC 7644 §3.4.2.5)", () => {
  it.each([
    ["none", {}, {}],
    ["attributes", { attributes: "userName,emails" }, { attributes: ["userName", "emails"] }],
    [
      "trimmed, empties dropped",
      { attributes: " userName , ,name.givenName," },
      { attributes: ["userName", "name.givenName"] },
    ],
    [
      "URN-qualified names kept whole",
      { excludedAttributes: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager" },
      { excludedAttributes: ["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager"] },
    ],
    ["excludedAttributes", { excludedAttributes: "groups" }, { excludedAttributes: ["groups"] }],
    ["blank list counts as absent", { attributes: " , " }, {}],
    [
      "blank attributes beside excludedAttributes",
      { attributes: "", excludedAttributes: "groups" },
      { excludedAttributes: ["groups"] },
    ],
    ["repeated: the first wins", { attributes: ["id", "userName"] }, { attributes: ["id"] }],
  ])("%s", (_name, q, expected) => {
    expect(parseProjection(q)).toEqual(expected);
    expect(parseListQuery("User", q)).toEqual({ page: offset(1, 100), ...expected });
  });

  it.each([
    ["both lists", { attributes: "userName", excludedAttributes: "emails" }],
    ["both lists with a cursor", { cursor: "", attributes: "id", excludedAttributes: "groups" }],
  ])("%s → 400 without scimType", (_name, q) => {
    for (const parse of [() => parseProjection(q), () => parseListQuery("User", q)]) {
      const err = scimErrorOf(parse);
      expect(err.status).toBe(400);
      expect(err.scimType).toBeUndefined();
      expect(err.detail).toBe("attributes and excludedAttributes are mutually exclusive");
    }
  });
});
