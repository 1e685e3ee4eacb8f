import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIssuedKey, rawKey, verifyKey } from "../helpers/api-keys.js";
import { createTestApp, createTestDatabase, type TestApp, type TestDatabase } from "../helpers/app.js";
import { adminCall } from "../helpers/seed.js";
import { ManualClock } from "../../src/platform/clock.js";

/** Two app instances on one PostgreSQL database, sharing a clock: limits must hold across both. */
let database: TestDatabase;
let a: TestApp;
let b: TestApp;
const clock = new ManualClock(Date.UTC(2026, 2, 1, 12, 0, 0));

beforeAll(async () => {
  database = await createTestDatabase();
  a = await createTestApp({ database, clock });
  b = await createTestApp({ database, clock });
});
afterAll(async () => {
  await a.close();
  await b.close();
  await database.close();
});

describe("rate limits counted in the database", () => {
  it("reports limit, remaining and reset_time of a fixed window aligned to the period", async () => {
    const key = await createIssuedKey(a, { rate_limits: [{ name: "per_minute", limit: 3, period: "60s" }] });
    clock.set(new Date(Date.UTC(2026, 2, 1, 12, 0, 10)));
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await verifyKey(a, key.secret as string));
    const reset = "2026-03-01T12:01:00.000Z";
    expect(results.map((r) => r.rate_limit)).toEqual([
      { limit: 3, remaining: 2, reset_time: reset },
      { limit: 3, remaining: 1, reset_time: reset },
      { limit: 3, remaining: 0, reset_time: reset },
      { limit: 3, remaining: 0, reset_time: reset },
    ]);
    expect(results.map((r) => r.valid)).toEqual([true, true, true, false]);
    expect(results[3]).toMatchObject({ valid: false, reason: "RATE_LIMITED", key_id: key.key_id });

    clock.set(new Date(Date.UTC(2026, 2, 1, 12, 1, 0)));
    expect(await verifyKey(b, key.secret as string)).toMatchObject({
      valid: true,
      rate_limit: { limit: 3, remaining: 2, reset_time: "2026-03-01T12:02:00.000Z" },
    });
  });

  it("never over-admits across two instances, even with concurrent verifications", async () => {
    const key = await createIssuedKey(a, { rate_limits: [{ name: "burst", limit: 10, period: "3600s" }] });
    const calls = Array.from({ length: 30 }, (_, i) => verifyKey(i % 2 === 0 ? a : b, key.secret as string));
    const results = await Promise.all(calls);
    expect(results.filter((r) => r.valid === true)).toHaveLength(10);
    expect(results.filter((r) => r.reason === "RATE_LIMITED")).toHaveLength(20);
    // Each admitted call saw a distinct remaining count: 9..0.
    const remaining = results
      .filter((r) => r.valid === true)
      .map((r) => (r.rate_limit as { remaining: number }).remaining);
    expect(remaining.sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("with several limits, any exhausted one rejects and the tightest is reported", async () => {
    const key = await createIssuedKey(a, {
      rate_limits: [
        { name: "per_second", limit: 2, period: "1s" },
        { name: "per_day", limit: 5, period: "86400s" },
      ],
    });
    clock.set(new Date(Date.UTC(2026, 2, 2, 0, 0, 0)));
    const first = await verifyKey(a, key.secret as string);
    expect(first.rate_limit).toEqual({ limit: 2, remaining: 1, reset_time: "2026-03-02T00:00:01.000Z" });
    expect((await verifyKey(b, key.secret as string)).valid).toBe(true);
    expect((await verifyKey(a, key.secret as string)).reason).toBe("RATE_LIMITED");
    clock.advance(1000);
    expect((await verifyKey(b, key.secret as string)).valid).toBe(true);
    const fifth = await verifyKey(a, key.secret as string);
    expect(fifth.valid).toBe(true);
    // Rejected calls count too: 5 calls so far used up the daily limit.
    expect(fifth.rate_limit).toEqual({ limit: 5, remaining: 0, reset_time: "2026-03-03T00:00:00.000Z" });
    clock.advance(1000);
    expect(await verifyKey(b, key.secret as string)).toMatchObject({
      valid: false,
      reason: "RATE_LIMITED",
      rate_limit: { limit: 5, remaining: 0 },
    });
  });

  it("changing rate_limits by PATCH starts fresh windows", async () => {
    const key = await createIssuedKey(a, { rate_limits: [{ name: "m", limit: 1, period: "60s" }] });
    await verifyKey(a, key.secret as string);
    expect((await verifyKey(a, key.secret as string)).reason).toBe("RATE_LIMITED");
    const res = await adminCall(b, "PATCH", `/issuedApiKeys/${key.key_id}?update_mask=rate_limits`, {
      issued_api_key: { rate_limits: [{ name: "m", limit: 2, period: "60s" }] },
    });
    expect(res.statusCode).toBe(200);
    expect(await verifyKey(a, key.secret as string)).toMatchObject({ valid: true, rate_limit: { remaining: 1 } });
  });

  it("a key without limits has no rate_limit in its result; imported keys can be limited", async () => {
    const unlimited = await createIssuedKey(a);
    expect(await verifyKey(a, unlimited.secret as string)).not.toHaveProperty("rate_limit");
    await adminCall(a, "POST", "/importedApiKeys:batchCreate", {
      requests: [
        { raw_key: rawKey("rl-imp"), name: "n", actor_id: "a", rate_limits: [{ name: "m", limit: 1, period: 60 }] },
      ],
    });
    expect((await verifyKey(a, rawKey("rl-imp"))).valid).toBe(true);
    expect((await verifyKey(b, rawKey("rl-imp"))).reason).toBe("RATE_LIMITED");
  });
});
