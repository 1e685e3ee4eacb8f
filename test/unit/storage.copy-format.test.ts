import { describe, expect, it } from "vitest";
import { type CopyColumn, type CopyValue, encodeCopyBinary } from "../../src/storage/copy.js";

const HEADER = "5047434f50590aff0d0a00" + "00000000" + "00000000";
const TRAILER = "ffff";

/** One row of one column, as hex: the field count (1), then the field. */
const one = (type: CopyColumn["type"], value: CopyValue): string =>
  encodeCopyBinary([{ name: "c", type }], [[value]]).toString("hex");

describe("encodeCopyBinary: COPY's binary format", () => {
  it("frames the rows: signature, flags and header extension, then the rows, then -1", () => {
    expect(encodeCopyBinary([{ name: "c", type: "int2" }], []).toString("hex")).toBe(HEADER + TRAILER);
  });

  const fields: Array<[string, CopyColumn["type"], CopyValue, string]> = [
    ["null", "text", null, "ffffffff"],
    ["undefined", "uuid", undefined, "ffffffff"],
    ["empty text (not null)", "text", "", "00000000"],
    ["text as UTF-8, its byte length first", "text", "Zoë", "000000045a6fc3ab"],
    ["NUL as U+FFFD", "text", "\u0000", "00000003efbfbd"],
    ["uuid: 16 bytes", "uuid", "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "000000100193a1b2c3d47e5f8a9b0c1d2e3f4a5b"],
    ["int2", "int2", 404, "000000020194"],
    ["int4", "int4", -2, "00000004fffffffe"],
    ["bytea: its bytes as they are", "bytea", Uint8Array.of(0, 0xff), "0000000200ff"],
    [
      "text[]: dimensions, no nulls, element type 25, size and lower bound, then each element",
      "text[]",
      ["a", "bc"],
      "0000001f" + "00000001" + "00000000" + "00000019" + "00000002" + "00000001" + "0000000161" + "000000026263",
    ],
    ["an empty text[]: no dimension", "text[]", [], "0000000c" + "00000000" + "00000000" + "00000019"],
    [
      "int2[]: element type 21",
      "int2[]",
      [404],
      "0000001a" + "00000001" + "00000000" + "00000015" + "00000001" + "00000001" + "000000020194",
    ],
  ];
  it.each(fields)("%s", (_name, type, value, field) => {
    expect(one(type, value)).toBe(`${HEADER}0001${field}${TRAILER}`);
  });

  const refused: Array<[string, CopyColumn["type"], CopyValue, string]> = [
    ["a number for text", "text", 5, "a text column needs a string"],
    ["a malformed uuid", "uuid", "0193a1b2-zzzz", "not a uuid"],
    ["an int2 out of range", "int2", 32_768, "not an int2"],
    ["a fraction for int2", "int2", 1.5, "not an int2"],
    ["an int4 out of range", "int4", 2 ** 31, "not an int4"],
    ["a string for bytea", "bytea", "ff", "a bytea column needs a Uint8Array"],
    ["a string for text[]", "text[]", "{a}", "a text[] column needs an array"],
    ["a number in text[]", "text[]", ["a", 1] as unknown as string[], "elements of type string, not number"],
    ["a null in text[]", "text[]", [null] as unknown as string[], "elements of type string, not object"],
    ["an int2 out of range in int2[]", "int2[]", [1, 40_000], "not an int2: 40000"],
  ];
  it.each(refused)("refuses %s", (_name, type, value, message) => {
    expect(() => one(type, value)).toThrow(message);
  });

  it("refuses a row with a value too few", () => {
    expect(() =>
      encodeCopyBinary(
        [
          { name: "a", type: "int2" },
          { name: "b", type: "int2" },
        ],
        [[1]],
      ),
    ).toThrow("a COPY row has 1 values for 2 columns");
  });

  it("grows past its first buffer", () => {
    const big = "é".repeat(100_000);
    const out = encodeCopyBinary([{ name: "c", type: "text" }], [[big], [big]]);
    expect(out.length).toBe(19 + 2 * (2 + 4 + 200_000) + 2);
    expect(out.subarray(19 + 2 + 4, 19 + 2 + 4 + 200_000).toString("utf8")).toBe(big);
  });
});
