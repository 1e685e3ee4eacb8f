import { describe, expect, it } from "vitest";
import { createIssuedKey, verifyKey } from "../helpers/api-keys.js";
import { adminCall } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

const { t } = useTestApp();

const rotate = (id: unknown, body: unknown = {}) => adminCall(t, "POST", `/issuedApiKeys/${String(id)}:rotate`, body);

describe("POST /issuedApiKeys/{key_id}:rotate", () => {
  it("returns a new secret and prefix; the old secret stops verifying at once without a grace period", async () => {
    const key = await createIssuedKey(t, { name: "rotating", scopes: ["a"], metadata: { team: "x" } });
    const res = await rotate(key.key_id);
    expect(res.statusCode, res.body).toBe(200);
    const rotated = res.json();
    expect(rotated).toMatchObject({ key_id: key.key_id, name: "rotating", scopes: ["a"], metadata: { team: "x" } });
    expect(rotated.secret).toMatch(/^rsk_[0-9a-f]{8}_[A-Za-z0-9_-]{43}$/);
    expect(rotated.secret).not.toBe(key.secret);
    expect(rotated.prefix).not.toBe(key.prefix);
    expect(rotated).not.toHaveProperty("previous_secret_expire_time");

    expect(await verifyKey(t, key.secret as string)).toEqual({ valid: false, reason: "NOT_FOUND" });
    expect(await verifyKey(t, rotated.secret)).toMatchObject({ valid: true, key_id: key.key_id });
    const got = (await adminCall(t, "GET", `/issuedApiKeys/${key.key_id}`)).json();
    expect(got.prefix).toBe(rotated.prefix);
    expect(got).not.toHaveProperty("secret");
  });

  it.each([["3600s"], [3600]])("with grace_period %j the old secret verifies until the grace ends", async (grace) => {
    const key = await createIssuedKey(t);
    const res = await rotate(key.key_id, { grace_period: grace });
    expect(res.statusCode, res.body).toBe(200);
    const rotated = res.json();
    const until = new Date(t.clock.now().getTime() + 3600_000).toISOString();
    expect(rotated.previous_secret_expire_time).toBe(until);

    expect(await verifyKey(t, key.secret as string)).toMatchObject({ valid: true, key_id: key.key_id });
    t.clock.advance(3599_000);
    expect(await verifyKey(t, key.secret as string)).toMatchObject({ valid: true });
    t.clock.advance(1_000);
    expect(await verifyKey(t, key.secret as string)).toEqual({ valid: false, reason: "NOT_FOUND" });
    expect(await verifyKey(t, rotated.secret)).toMatchObject({ valid: true });
  });

  it("a second rotation never extends an earlier secret's grace, and without grace ends every old secret", async () => {
    const key = await createIssuedKey(t);
    const first = (await rotate(key.key_id, { grace_period: "600s" })).json();
    t.clock.advance(60_000);
    const second = (await rotate(key.key_id, { grace_period: "3600s" })).json();
    // The original secret keeps its 600 s deadline; the first rotated one gets 3600 s.
    t.clock.advance(540_000);
    expect((await verifyKey(t, key.secret as string)).valid).toBe(false);
    expect((await verifyKey(t, first.secret)).valid).toBe(true);
    expect((await verifyKey(t, second.secret)).valid).toBe(true);

    const third = (await rotate(key.key_id)).json();
    expect((await verifyKey(t, first.secret)).valid).toBe(false);
    expect((await verifyKey(t, second.secret)).valid).toBe(false);
    expect((await verifyKey(t, third.secret)).valid).toBe(true);
  });

  it("accepts an empty JSON object and a zero grace period", async () => {
    const key = await createIssuedKey(t);
    const res = await rotate(key.key_id, { grace_period: "0s" });
    expect(res.statusCode).toBe(200);
    expect((await verifyKey(t, key.secret as string)).valid).toBe(false);
  });

  it.each([
    ["more than 24 h", { grace_period: "86401s" }],
    ["negative", { grace_period: -1 }],
    ["fractional", { grace_period: "1.5s" }],
    ["a unit other than s", { grace_period: "1h" }],
  ])("refuses a grace period that is %s → 400, and keeps the secret", async (_name, body) => {
    const key = await createIssuedKey(t);
    const res = await rotate(key.key_id, body);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.status).toBe("INVALID_ARGUMENT");
    expect((await verifyKey(t, key.secret as string)).valid).toBe(true);
  });

  it("accepts exactly 24 h", async () => {
    const key = await createIssuedKey(t);
    expect((await rotate(key.key_id, { grace_period: "86400s" })).statusCode).toBe(200);
  });

  it("unknown key → 404", async () => {
    expect((await rotate("01900000-0000-7000-8000-000000000000")).statusCode).toBe(404);
  });
});
