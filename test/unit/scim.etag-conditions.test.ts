import { describe, expect, it } from "vitest";
import { conditionOf, etagOf } from "../../src/scim/etag.js";

describe("conditionOf reads If-Match and If-None-Match (RFC 9110 §13.1.1, §13.1.2)", () => {
  it.each([
    ["absent", undefined, undefined],
    ["any", "*", "any"],
    ["any with blanks", "  * ", "any"],
    ["one weak tag", 'W/"12"', ["12"]],
    ["one strong tag: weak comparison ignores W/", '"12"', ["12"]],
    ["a list", 'W/"1", "2",W/"3"', ["1", "2", "3"]],
    ["a comma inside a tag", '"a,b", W/"4"', ["a,b", "4"]],
    ["an empty tag", '""', [""]],
    ["nothing well-formed matches nothing", "12, W/13", []],
    ["repeated headers", ['W/"1"', 'W/"2"'], ["1", "2"]],
  ])("%s", (_name, header, expected) => {
    expect(conditionOf(header)).toEqual(expected);
  });
});

describe("etagOf", () => {
  it("writes a row version as a weak entity tag", () => {
    expect(etagOf("42")).toBe('W/"42"');
  });
});
