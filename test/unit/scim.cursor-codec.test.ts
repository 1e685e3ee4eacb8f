import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/platform/clock.js";
import { type CursorContext, CursorCodec, queryDigest } from "../../src/scim/query/cursor.js";
import { scimErrorOf } from "../helpers/errors.js";

const OLD = Buffer.alloc(32, 1);
const NEW = Buffer.alloc(32, 2);
const LAST_ID = "0191d3a4-7b2c-7def-8a12-3456789abcde";
const digest = queryDigest({ filter: 'userName eq "a"', count: 100 });
const ctx: CursorContext = { clientId: "okta-prod", resource: "User", queryDigest: digest };

function flip(token: string, at: number): string {
  const ch = token.charAt(at);
  return token.slice(0, at) + (ch === "A" ? "B" : "A") + token.slice(at + 1);
}

describe("CursorCodec round trip", () => {
  it.each([
    ["a UUIDv7", LAST_ID],
    ["an upper-case UUID comes back lower-case", "6F1C2A9E-3B4D-4E5F-8A7B-9C0D1E2F3A4B"],
    ["the nil UUID", "00000000-0000-0000-0000-000000000000"],
  ])("%s", (_name, id) => {
    const codec = new CursorCodec([OLD], new ManualClock());
    const token = codec.encode(ctx, id);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(token).not.toContain(id.slice(0, 8).toLowerCase());
    expect(codec.decode(ctx, token)).toEqual({ lastId: id.toLowerCase() });
  });

  it("refuses to encode a lastId that is not a UUID", () => {
    expect(() => new CursorCodec([OLD], new ManualClock()).encode(ctx, "42")).toThrow(/UUID/);
  });

  it("needs at least one secret", () => {
    expect(() => new CursorCodec([], new ManualClock())).toThrow();
  });
});

describe("CursorCodec expiry at CURSOR_TTL_SECONDS", () => {
  it.each([
    ["just issued", 0, undefined],
    ["59 minutes old", 59 * 60_000, undefined],
    ["exactly 3600 s old", 3_600_000, undefined],
    ["3600 s + 1 ms old", 3_600_001, "expiredCursor"],
    ["two hours old", 7_200_000, "expiredCursor"],
  ] as const)("%s", (_name, ageMs, scimType) => {
    const clock = new ManualClock();
    const codec = new CursorCodec([OLD], clock);
    const token = codec.encode(ctx, LAST_ID);
    clock.advance(ageMs);
    if (scimType === undefined) {
      expect(codec.decode(ctx, token).lastId).toBe(LAST_ID);
    } else {
      const err = scimErrorOf(() => codec.decode(ctx, token));
      expect(err.status).toBe(400);
      expect(err.scimType).toBe(scimType);
      expect(err.detail).toContain("restart pagination from the first page");
    }
  });

  it("a tampered expired cursor is invalidCursor, not expiredCursor", () => {
    const clock = new ManualClock();
    const codec = new CursorCodec([OLD], clock);
    const token = codec.encode(ctx, LAST_ID);
    clock.advance(7_200_000);
    expect(scimErrorOf(() => codec.decode(ctx, flip(token, 3))).scimType).toBe("invalidCursor");
  });
});

describe("CursorCodec rejects foreign or damaged cursors as invalidCursor", () => {
  const clock = new ManualClock();
  const codec = new CursorCodec([OLD], clock);
  const token = codec.encode(ctx, LAST_ID);
  const otherDigest = queryDigest({ filter: 'userName eq "b"', count: 100 });

  it.each([
    ["flipped char in the issue time", ctx, flip(token, 2)],
    ["flipped char in the last id", ctx, flip(token, 20)],
    ["flipped char in the MAC", ctx, flip(token, token.length - 5)],
    ["truncated", ctx, token.slice(0, -4)],
    ["extended", ctx, `${token}AAAA`],
    ["non-canonical characters", ctx, `${token.slice(0, 10)}!${token.slice(10)}`],
    ["standard base64 padding", ctx, `${token}=`],
    ["empty-ish garbage", ctx, "x"],
    ["a JSON blob", ctx, Buffer.from('{"lastId":"x"}').toString("base64url")],
    ["foreign client", { ...ctx, clientId: "entra-prod" }, token],
    ["other resource", { ...ctx, resource: "Group" as const }, token],
    ["different query digest", { ...ctx, queryDigest: otherDigest }, token],
    ["signed with an unknown secret", ctx, new CursorCodec([NEW], clock).encode(ctx, LAST_ID)],
  ])("%s", (_name, context, candidate) => {
    const err = scimErrorOf(() => codec.decode(context, candidate));
    expect(err.status).toBe(400);
    expect(err.scimType).toBe("invalidCursor");
    expect(err.detail).toContain("restart pagination from the first page");
  });
});

describe("CursorCodec secret rotation (ROSTER_SECRETS)", () => {
  const clock = new ManualClock();
  const before = new CursorCodec([OLD], clock);
  const after = new CursorCodec([NEW, OLD], clock);
  const retired = new CursorCodec([NEW], clock);

  it.each([
    ["old-secret cursor verifies when the old secret is second", before, after, true],
    ["new-secret cursor verifies on the rotated ring", after, after, true],
    ["new codec signs with the first secret only", after, before, false],
    ["old-secret cursor fails once the old secret is removed", before, retired, false],
  ] as const)("%s", (_name, signer, verifier, ok) => {
    const token = signer.encode(ctx, LAST_ID);
    if (ok) expect(verifier.decode(ctx, token).lastId).toBe(LAST_ID);
    else expect(scimErrorOf(() => verifier.decode(ctx, token)).scimType).toBe("invalidCursor");
  });
});

describe("queryDigest", () => {
  const base = { filter: 'userName eq "a"', count: 100, attributes: "userName", excludedAttributes: undefined };

  it("is stable and short", () => {
    expect(queryDigest(base)).toBe(queryDigest({ ...base }));
    expect(queryDigest(base)).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it.each([
    ["filter", { ...base, filter: 'userName eq "b"' }],
    ["no filter", { ...base, filter: undefined }],
    ["count", { ...base, count: 10 }],
    ["attributes", { ...base, attributes: "emails" }],
    ["attributes moved to excludedAttributes", { ...base, attributes: undefined, excludedAttributes: "userName" }],
    ["empty filter vs none", { ...base, filter: "" }],
    ["a sort", { ...base, sort: "userName ascending" }],
  ])("changes with %s", (_name, parts) => {
    expect(queryDigest(parts)).not.toBe(queryDigest(base));
  });

  it.each([
    ["another attribute", "name.familyName ascending"],
    ["the other order", "userName descending"],
  ])("differs between sorts: %s", (_name, sort) => {
    expect(queryDigest({ ...base, sort })).not.toBe(queryDigest({ ...base, sort: "userName ascending" }));
  });

  it("of an unsorted query is what it was before sorts were bound (cursors in flight stay valid)", () => {
    // The canonical form of the four unsorted parts, as the digest was computed before `sort` existed.
    const canonical = JSON.stringify([base.filter, base.count, base.attributes, null]);
    const expected = createHash("sha256").update(canonical).digest("base64url").slice(0, 22);
    expect(queryDigest(base)).toBe(expected);
  });
});

describe("CursorCodec sorted cursors: the last row's sort value rides along", () => {
  const clock = new ManualClock();
  const codec = new CursorCodec([OLD], clock);
  const sorted: CursorContext = {
    ...ctx,
    queryDigest: queryDigest({ filter: 'userName eq "a"', count: 100, sort: "userName ascending" }),
  };

  it.each<[string, string | null]>([
    ["a lower-cased userName", "bjensen@example.com"],
    ["the empty string (a present, empty value)", ""],
    ["null (the row has no value)", null],
    ["a timestamp as PostgreSQL writes it", "2026-11-27 00:34:02.123456+00"],
    ["a number", "-12.50"],
    ["non-ASCII text", "żółć 名前 🙂"],
    ["a long value", "x".repeat(2000)],
    ["text that looks like a flag byte", "\u0000\u0001"],
  ])("%s", (_name, value) => {
    const token = codec.encode(sorted, LAST_ID, value);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(codec.decode(sorted, token)).toEqual({ lastId: LAST_ID, sortValue: value });
  });

  it("an unsorted cursor decodes without a sort value", () => {
    expect(codec.decode(ctx, codec.encode(ctx, LAST_ID))).toEqual({ lastId: LAST_ID });
    expect(codec.decode(ctx, codec.encode(ctx, LAST_ID))).not.toHaveProperty("sortValue");
  });

  const token = codec.encode(sorted, LAST_ID, "bjensen@example.com");
  const bytes = Buffer.from(token, "base64url");
  const withByte = (at: number, value: number) => {
    const copy = Buffer.from(bytes);
    copy[at] = value;
    return copy.toString("base64url");
  };
  it.each([
    [
      "used with another sort",
      { ...ctx, queryDigest: queryDigest({ count: 100, sort: "userName descending" }) },
      token,
    ],
    ["used without its sort", ctx, token],
    ["an unsorted cursor used with a sort", sorted, codec.encode(ctx, LAST_ID)],
    ["a sort value changed", sorted, withByte(26, "c".charCodeAt(0))],
    ["the null flag set on a value", sorted, withByte(25, 0)],
    ["an unknown flag", sorted, withByte(25, 7)],
    ["the version byte changed to unsorted", sorted, withByte(0, 1)],
    ["an unknown version", sorted, withByte(0, 3)],
    ["cut before the flag", sorted, bytes.subarray(0, 25 + 31).toString("base64url")],
  ])("%s is invalidCursor", (_name, context, candidate) => {
    expect(scimErrorOf(() => codec.decode(context, candidate)).scimType).toBe("invalidCursor");
  });
});
