import { describe, expect, it } from "vitest";
import { preparedStatement, shapeName } from "../../src/storage/prepared.js";

describe("prepared statements (storage/prepared.ts)", () => {
  it("names each shape of a declared statement after its text, the same name on every connection", () => {
    const text = "select 1 as unit_test_prepared where $1::int = 1";
    const name = shapeName("unit_test", text);
    expect(name).toMatch(/^unit_test_[0-9a-f]{16}$/);
    expect(shapeName("unit_test", text)).toBe(name);
    expect(shapeName("unit_test", "select 2")).not.toBe(name);
  });

  it("refuses a declared name that is not short lower-case words (PostgreSQL truncates long names)", () => {
    expect(preparedStatement("user_by_id").name).toBe("user_by_id");
    expect(() => preparedStatement("a".repeat(41))).toThrowError(/not 1-40/);
    expect(() => preparedStatement("User-By-Id")).toThrowError(/not 1-40/);
  });
});
