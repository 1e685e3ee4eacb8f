import { describe, expect, it } from "vitest";
import { parseDuration, parseRateLimits as readRateLimits, parseTime } from "../../src/admin/routes/api-keys-fields.js";
import { toAdminError } from "../../src/admin/domain-errors.js";
import { batchFailure } from "../../src/apikeys/batch.js";
import { RateLimitsBody } from "../../src/admin/schemas/api-keys.js";
import { valueChecker } from "../../src/admin/validation.js";
import { evaluate, windowStart } from "../../src/apikeys/rate-limit.js";
import { digestOf, generateIssuedSecret } from "../../src/apikeys/secrets.js";
import type { ImportOutcome } from "../../src/apikeys/service.js";

describe("parseDuration", () => {
  it.each([
    ["3600s", 3600],
    [3600, 3600],
    ["0s", 0],
    [0, 0],
    ["86400s", 86400],
  ])("%j → %i seconds", (v, seconds) => {
    expect(parseDuration(v, "d", 86_400)).toBe(seconds);
  });
  it.each([["86401s"], [-1], [1.5], ["1.5s"], ["1h"], ["s"], [""], [null], ["60"]])("refuses %j", (v) => {
    expect(() => parseDuration(v, "d", 86_400)).toThrowError(/d must/);
  });
});

describe("parseTime", () => {
  it.each([
    ["2030-01-01T00:00:00Z", "2030-01-01T00:00:00.000Z"],
    ["2030-01-01t00:00:00.123456789z", "2030-01-01T00:00:00.123Z"],
    ["2030-01-01T02:00:00+02:00", "2030-01-01T00:00:00.000Z"],
  ])("%s → %s", (v, iso) => {
    expect(parseTime(v, "t")?.toISOString()).toBe(iso);
  });
  it.each(["2030-01-01", "2030-01-01T00:00:00", "2030-13-01T00:00:00Z", "next week", 1_700_000_000])(
    "refuses %j",
    (v) => {
      expect(() => parseTime(v, "t")).toThrowError(/t must/);
    },
  );
});

/** The schema checks the shape, the reader the rest (periods, repeated names): together, the edge's rate limits. */
const checkRateLimits = valueChecker(RateLimitsBody);
const parseRateLimits = (v: unknown, field: string) => readRateLimits(checkRateLimits(v, field), field);

describe("parseRateLimits", () => {
  it("reads name, limit and period", () => {
    expect(parseRateLimits([{ name: "a", limit: 3, period: "60s" }], "r")).toEqual([
      { name: "a", limit: 3, periodSeconds: 60 },
    ]);
  });
  it.each([
    [[{ name: "a", limit: 0, period: 1 }]],
    [[{ name: "a", limit: 1.5, period: 1 }]],
    [[{ name: "a", limit: 1, period: 0 }]],
    [[{ name: "a b", limit: 1, period: 1 }]],
    [
      [
        { name: "a", limit: 1, period: 1 },
        { name: "a", limit: 1, period: 2 },
      ],
    ],
    [Array.from({ length: 11 }, (_, i) => ({ name: `n${i}`, limit: 1, period: 1 }))],
    [{ name: "a" }],
  ])("refuses %j", (v) => {
    expect(() => parseRateLimits(v, "r")).toThrowError(/r/);
  });
});

describe("fixed windows", () => {
  it("aligns window starts to the period", () => {
    expect(windowStart(new Date("2026-03-01T12:00:59.999Z"), 60).toISOString()).toBe("2026-03-01T12:00:00.000Z");
    expect(windowStart(new Date("2026-03-01T12:01:00.000Z"), 60).toISOString()).toBe("2026-03-01T12:01:00.000Z");
    expect(windowStart(new Date("2026-03-01T12:34:56Z"), 86_400).toISOString()).toBe("2026-03-01T00:00:00.000Z");
  });

  it("admits while every count is within its limit and reports the tightest", () => {
    const ws = new Date("2026-03-01T00:00:00Z");
    const limits = [
      { name: "s", limit: 2, periodSeconds: 1 },
      { name: "d", limit: 10, periodSeconds: 86_400 },
    ];
    expect(
      evaluate(limits, [
        { name: "s", windowStart: ws, count: 2 },
        { name: "d", windowStart: ws, count: 2 },
      ]),
    ).toEqual({
      admitted: true,
      status: { limit: 2, remaining: 0, resetTime: new Date("2026-03-01T00:00:01Z") },
    });
    expect(
      evaluate(limits, [
        { name: "s", windowStart: ws, count: 3 },
        { name: "d", windowStart: ws, count: 3 },
      ])?.admitted,
    ).toBe(false);
    expect(evaluate([], [])).toBeUndefined();
  });
});

describe("issued secrets", () => {
  it("carry the visible prefix, 256 random bits, and are stored as SHA-256", () => {
    const s = generateIssuedSecret();
    expect(s.secret.startsWith(`${s.prefix}_`)).toBe(true);
    expect(s.prefix).toMatch(/^rsk_[0-9a-f]{8}$/);
    expect(Buffer.from(s.secret.slice(s.prefix.length + 1), "base64url")).toHaveLength(32);
    expect(s.digest.equals(digestOf(s.secret))).toBe(true);
    expect(digestOf("abc").toString("hex")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(generateIssuedSecret().secret).not.toBe(s.secret);
  });
});

describe("batch status", () => {
  const ok = { key: {} } as ImportOutcome;
  const dup: ImportOutcome = { error: { code: "ALREADY_EXISTS", message: "" } };
  const bad: ImportOutcome = { error: { code: "INVALID_ARGUMENT", message: "" } };
  it.each<[ImportOutcome[], number | undefined]>([
    [[ok], undefined],
    [[ok, dup, bad], undefined],
    [[dup, dup], 409],
    [[dup, bad], 400],
    [[bad], 400],
  ])("%j → %s", (outcomes, status) => {
    const failure = batchFailure(outcomes);
    expect(failure === undefined ? undefined : toAdminError(failure).httpStatus).toBe(status);
  });
});
