import { CompiledQuery } from "kysely";
import { describe, expect, it } from "vitest";
import { prepared, statementName } from "../../src/storage/prepared.js";

describe("prepared statements (storage/prepared.ts)", () => {
  it("names a marked SQL text once, and leaves other texts unnamed", () => {
    const text = "select 1 as unit_test_prepared where $1::int = 1";
    expect(statementName(text)).toBeUndefined();
    prepared(CompiledQuery.raw(text, [1]));
    const name = statementName(text);
    expect(name).toMatch(/^roster_\d+$/);
    prepared(CompiledQuery.raw(text, [2]));
    expect(statementName(text)).toBe(name);
    expect(statementName("select 2")).toBeUndefined();
  });
});
