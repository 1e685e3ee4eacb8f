import { describe, expect, it } from "vitest";
import { clone } from "../../src/scim/patch/json.js";
import type { JsonValue } from "../../src/scim/patch/types.js";

const cases: { name: string; value: JsonValue }[] = [
  { name: "a string", value: "bjensen" },
  { name: "a number", value: 42 },
  { name: "a boolean", value: false },
  { name: "null", value: null },
  { name: "an empty object", value: {} },
  { name: "an empty array", value: [] },
  {
    name: "a user with nested objects and arrays",
    value: {
      userName: "bjensen",
      name: { givenName: "Barbara", familyName: "Jensen" },
      emails: [{ value: "b@example.com", primary: true }, { value: "bj@example.com" }],
      "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": { manager: { value: "x" } },
      tags: [
        ["a", 1],
        [null, { deep: [true] }],
      ],
    },
  },
];

describe("clone of a JSON value", () => {
  for (const { name, value } of cases) {
    it(`copies ${name}: equal, sharing no object or array`, () => {
      const copy = clone(value);
      expect(copy).toStrictEqual(value);
      const shared: string[] = [];
      const walk = (a: unknown, b: unknown, at: string) => {
        if (typeof a !== "object" || a === null) return;
        if (a === b) shared.push(at);
        for (const k of Object.keys(a))
          walk((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${at}/${k}`);
      };
      walk(value, copy, "");
      expect(shared).toEqual([]);
    });
  }

  it("keeps an own __proto__ key as a key, leaving the copy's prototype alone", () => {
    const value = JSON.parse('{"a":{"__proto__":{"polluted":true},"b":1}}') as JsonValue;
    const copy = clone(value) as { a: Record<string, unknown> };
    expect(Object.getPrototypeOf(copy.a)).toBe(Object.prototype);
    expect(Object.keys(copy.a)).toEqual(["__proto__", "b"]);
    expect(Object.getOwnPropertyDescriptor(copy.a, "__proto__")?.value).toEqual({ polluted: true });
    expect((copy.a as { polluted?: unknown }).polluted).toBeUndefined();
  });
});
