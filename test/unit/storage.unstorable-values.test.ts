import { describe, expect, it } from "vitest";
import { describeProblem, findUnstorable, unstorableIn } from "../../src/platform/storable.js";
import { clientDataErrorCode } from "../../src/storage/errors.js";

describe("unstorableIn", () => {
  it.each([
    ["plain text", "hello", undefined],
    ["an emoji (a surrogate pair)", "a😀b", undefined],
    ["other control characters", "\u0001\u001f\u007f", undefined],
    ["NUL", "a\u0000b", "a NUL character"],
    ["a lone high surrogate at the end", "ab\ud83d", "an unpaired UTF-16 surrogate"],
    ["a lone low surrogate at the start", "\ude00ab", "an unpaired UTF-16 surrogate"],
    ["a reversed pair", "\ude00\ud83d", "an unpaired UTF-16 surrogate"],
    ["NUL beside a valid pair", "😀\u0000", "a NUL character"],
  ])("%s", (_name, text, expected) => {
    expect(unstorableIn(text)).toBe(expected);
  });
});

describe("findUnstorable", () => {
  const deep = (n: number): unknown => {
    let v: unknown = 1;
    for (let i = 0; i < n; i++) v = [v];
    return v;
  };
  it.each([
    ["a clean document", { a: [1, "x", { b: null }] }, undefined],
    ["a value", { emails: [{ value: "x" }, { value: "y\u0000" }] }, "emails[1].value contains a NUL character"],
    ["a key", { "a\u0000": 1 }, '["a\\u0000"] contains a NUL character'],
    ["a URN key", { "urn:x:y": { z: "\ud800" } }, '["urn:x:y"].z contains an unpaired UTF-16 surrogate'],
    ["the value itself", "\u0000", "the request body contains a NUL character"],
    ["nesting at the limit", deep(4), undefined],
    ["nesting over the limit", deep(5), "the request body is nested more than 4 levels deep"],
    ["nesting a million deep (no recursion)", deep(1_000_000), "the request body is nested more than 4 levels deep"],
  ])("%s", (_name, value, expected) => {
    const problem = findUnstorable(value, 4);
    if (expected === undefined) expect(problem).toBeUndefined();
    else expect(problem === undefined ? "" : describeProblem(problem, 4)).toContain(expected);
  });
});

describe("clientDataErrorCode: database errors a request's values alone cause", () => {
  it.each([
    ["22P05 untranslatable character", { code: "22P05" }, "22P05"],
    ["22021 bad encoding", { code: "22021" }, "22021"],
    ["22001 string too long", { code: "22001" }, "22001"],
    ["22003 numeric out of range", { code: "22003" }, "22003"],
    ["54000 program limit (index row size)", { code: "54000" }, "54000"],
    ["54001 stack depth", { code: "54001" }, "54001"],
    ["23505 unique violation (the repository's own)", { code: "23505" }, undefined],
    ["57P01 admin shutdown (an outage)", { code: "57P01" }, undefined],
    ["a Node error code", { code: "ECONNREFUSED" }, undefined],
    ["not an error", undefined, undefined],
  ])("%s", (_name, error, expected) => {
    expect(clientDataErrorCode(error)).toBe(expected);
  });
});
