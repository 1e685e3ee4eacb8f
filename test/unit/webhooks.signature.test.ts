import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { computeSignature, signatureHeader } from "../../src/webhooks/signing.js";
import { DEFAULT_TOLERANCE_MS, verifyWebhookSignature } from "../../src/webhooks/verify.js";

const SECRET = "whsec_test_0123456789";
const T = 1_767_225_600_000;
const BODY = '{"directory_id":"d1","event":"user.created","tenant":"acme","product":"app","data":{"id":"ü"}}';
const HEADER = signatureHeader(SECRET, T, BODY);
const SIG = computeSignature(SECRET, T, BODY);

describe("signatureHeader", () => {
  it("is t=<unix ms>,s=<hex HMAC-SHA256 of t.body>", () => {
    const expected = createHmac("sha256", SECRET).update(`${T}.${BODY}`).digest("hex");
    expect(HEADER).toBe(`t=${T},s=${expected}`);
    expect(SIG).toMatch(/^[0-9a-f]{64}$/);
  });

  it("signs the UTF-8 bytes: a string and its Buffer give the same signature", () => {
    expect(computeSignature(SECRET, T, Buffer.from(BODY, "utf8"))).toBe(SIG);
  });
});

describe("verifyWebhookSignature", () => {
  const at = { now: T };
  it.each<
    [string, string, string | null | undefined, string | Buffer, { now?: number; toleranceMs?: number }, boolean]
  >([
    ["the signed body", SECRET, HEADER, BODY, at, true],
    ["the raw body as a Buffer", SECRET, HEADER, Buffer.from(BODY), at, true],
    ["whitespace around the parts", SECRET, ` t=${T} , s=${SIG} `, BODY, at, true],
    ["parts in either order", SECRET, `s=${SIG},t=${T}`, BODY, at, true],
    ["upper-case hex", SECRET, `t=${T},s=${SIG.toUpperCase()}`, BODY, at, true],
    ["one of several s values matching (rotation)", SECRET, `t=${T},s=${"0".repeat(64)},s=${SIG}`, BODY, at, true],
    ["a timestamp at the edge of the tolerance", SECRET, HEADER, BODY, { now: T + DEFAULT_TOLERANCE_MS }, true],
    ["a tampered body", SECRET, HEADER, BODY.replace("acme", "acm3"), at, false],
    ["re-serialised JSON (whitespace added)", SECRET, HEADER, JSON.stringify(JSON.parse(BODY), null, 1), at, false],
    ["a wrong secret", "other-secret", HEADER, BODY, at, false],
    ["an empty secret", "", HEADER, BODY, at, false],
    ["a stale timestamp", SECRET, HEADER, BODY, { now: T + DEFAULT_TOLERANCE_MS + 1 }, false],
    ["a timestamp from the future", SECRET, HEADER, BODY, { now: T - 60_001, toleranceMs: 60_000 }, false],
    ["a changed timestamp", SECRET, `t=${T + 1},s=${SIG}`, BODY, { now: T }, false],
    ["seconds instead of milliseconds", SECRET, signatureHeader(SECRET, T / 1000, BODY), BODY, at, false],
    ["no header", SECRET, undefined, BODY, at, false],
    ["null header", SECRET, null, BODY, at, false],
    ["an empty header", SECRET, "", BODY, at, false],
    ["no t", SECRET, `s=${SIG}`, BODY, at, false],
    ["no s", SECRET, `t=${T}`, BODY, at, false],
    ["two t values", SECRET, `t=${T},t=${T},s=${SIG}`, BODY, at, false],
    ["a non-numeric t", SECRET, `t=abc,s=${SIG}`, BODY, at, false],
    ["a negative t", SECRET, `t=-${T},s=${SIG}`, BODY, at, false],
    ["a part without =", SECRET, `t=${T},${SIG}`, BODY, at, false],
    ["a short signature", SECRET, `t=${T},s=${SIG.slice(0, 63)}`, BODY, at, false],
    ["a non-hex signature", SECRET, `t=${T},s=${"z".repeat(64)}`, BODY, at, false],
    ["a base64 signature", SECRET, `t=${T},s=${Buffer.from(SIG, "hex").toString("base64")}`, BODY, at, false],
  ])("%s → %s", (_name, secret, header, body, options, valid) => {
    expect(verifyWebhookSignature(secret, header, body, options)).toBe(valid);
  });

  it("uses the current time by default", () => {
    const now = Date.now();
    expect(verifyWebhookSignature(SECRET, signatureHeader(SECRET, now, BODY), BODY)).toBe(true);
    expect(verifyWebhookSignature(SECRET, HEADER, BODY)).toBe(false);
  });

  it("accepts a Date as now", () => {
    expect(verifyWebhookSignature(SECRET, HEADER, BODY, { now: new Date(T + 1000) })).toBe(true);
  });
});
