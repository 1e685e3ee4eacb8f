import { describe, expect, it } from "vitest";
import { type CopyValue, copyField, copyLine } from "../../src/storage/copy.js";

describe("copyField: one value in COPY's text format", () => {
  const cases: Array<[string, CopyValue, string]> = [
    ["null", null, "\\N"],
    ["undefined", undefined, "\\N"],
    ["plain text, unchanged", "Okta SCIM Client 1.0.0", "Okta SCIM Client 1.0.0"],
    ["empty text (not null)", "", ""],
    ["the two characters backslash N are text, not null", "\\N", "\\\\N"],
    ["backslash", 'a\\"b', 'a\\\\"b'],
    ["tab", "a\tb", "a\\tb"],
    ["newline", "a\nb", "a\\nb"],
    ["carriage return", "a\r\nb", "a\\r\\nb"],
    ["every special at once", "\\\t\n\r", "\\\\\\t\\n\\r"],
    ["NUL, which PostgreSQL text cannot hold", "a\u0000b", "a\uFFFDb"],
    ["non-ASCII, unchanged", "Zoë 李 🙂", "Zoë 李 🙂"],
    ["true", true, "t"],
    ["false", false, "f"],
    ["integer", 404, "404"],
    ["fraction", 3.25, "3.25"],
    ["date", new Date(Date.UTC(2026, 10, 25, 17, 4, 5, 6)), "2026-11-25T17:04:05.006Z"],
  ];
  it.each(cases)("%s", (_name, value, expected) => {
    expect(copyField(value)).toBe(expected);
  });
});

describe("copyLine: one row", () => {
  it("separates fields with tabs and ends with a newline", () => {
    expect(copyLine(["a", null, 1, false])).toBe("a\t\\N\t1\tf\n");
  });
  it("keeps a field's own tab and newline inside the field", () => {
    expect(copyLine(["x\ty", "z\n"])).toBe("x\\ty\tz\\n\n");
  });
});
