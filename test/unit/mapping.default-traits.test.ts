import jsonata from "jsonata";
import { describe, expect, it } from "vitest";
import { DEFAULT_MAPPING, defaultTraits } from "../../src/directory/mapping/default.js";

const expression = jsonata(DEFAULT_MAPPING);
const viaJsonata = async (user: Record<string, unknown>) =>
  JSON.parse(JSON.stringify((await expression.evaluate(user)) ?? null)) as unknown;

const strings = [undefined, "", "x", "Ada Lovelace"];
const emailSets: unknown[] = [
  undefined,
  [],
  [{ value: "a@x" }],
  [{ value: "a@x" }, { value: "b@x", primary: true }],
  [{ value: "a@x", primary: false }, { type: "work" }, { value: "c@x", primary: true }],
  [{ type: "work", primary: true }, { value: "d@x" }],
  [
    { value: "p@x", primary: true },
    { value: "q@x", primary: true },
  ],
  [{ value: "", primary: true }, { value: "e@x" }],
];
const names: unknown[] = [
  undefined,
  {},
  { givenName: "Ada" },
  { familyName: "Lovelace", formatted: "" },
  { givenName: "Ada", familyName: "Lovelace", formatted: "Ada L." },
  { givenName: "", formatted: "F" },
];

describe("defaultTraits (the default mapping in plain code)", () => {
  it("yields exactly what the JSONata default mapping yields, for every combination of the usual shapes", async () => {
    let compared = 0;
    for (const userName of strings)
      for (const displayName of strings)
        for (const emails of emailSets)
          for (const name of names) {
            const user: Record<string, unknown> = { id: "0197", schemas: ["s"], active: true };
            if (userName !== undefined) user.userName = userName;
            if (displayName !== undefined) user.displayName = displayName;
            if (emails !== undefined) user.emails = emails;
            if (name !== undefined) user.name = name;
            const fast = defaultTraits(user);
            expect(fast).toBeDefined();
            expect(JSON.stringify(fast)).toBe(JSON.stringify(await viaJsonata(user)));
            compared++;
          }
    expect(compared).toBeGreaterThan(500);
  });

  it("declines shapes a validated user does not have, so the expression decides", () => {
    for (const user of [
      { userName: 5 },
      { emails: { value: "a@x" } },
      { emails: [{ value: ["a@x"] }] },
      { emails: [{ value: "a@x", primary: "true" }] },
      { emails: ["a@x"] },
      { name: "Ada" },
      { name: { givenName: { x: 1 } } },
      { displayName: 3 },
    ]) {
      expect(defaultTraits(user)).toBeUndefined();
    }
  });
});
