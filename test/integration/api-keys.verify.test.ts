import { describe, expect, it } from "vitest";
import { createIssuedKey, rawKey, verifyKey } from "../helpers/api-keys.js";
import { adminCall } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

const { t } = useTestApp();

describe("POST /apiKeys:verify", () => {
  it("a valid issued key: 200 with who it is and what it may do", async () => {
    const org = (await adminCall(t, "POST", "/organizations", { name: "v" })).json().id;
    const key = await createIssuedKey(t, {
      name: "ci",
      organization_id: org,
      actor_id: "user-7",
      scopes: ["repo:read"],
      metadata: { team: "ci", nested: { a: 1 } },
      expire_time: "2099-01-01T00:00:00Z",
    });
    expect(await verifyKey(t, key.secret as string)).toEqual({
      valid: true,
      key_id: key.key_id,
      kind: "issued",
      name: "ci",
      organization_id: org,
      actor_id: "user-7",
      scopes: ["repo:read"],
      metadata: { team: "ci", nested: { a: 1 } },
      expire_time: "2099-01-01T00:00:00.000Z",
    });
  });

  it("a valid imported key says kind imported", async () => {
    await adminCall(t, "POST", "/importedApiKeys:batchCreate", {
      requests: [{ raw_key: rawKey("verify-imp"), name: "legacy", actor_id: "u1", scopes: ["x"] }],
    });
    expect(await verifyKey(t, rawKey("verify-imp"))).toMatchObject({
      valid: true,
      kind: "imported",
      name: "legacy",
      actor_id: "u1",
      scopes: ["x"],
      metadata: {},
    });
  });

  it.each([
    ["an unknown key", "rsk_00000000_unknownunknownunknownunknownunknown00"],
    ["a near miss of a real key", "near-miss"],
    ["a key longer than any stored one", "k".repeat(5000)],
  ])("%s → valid false, NOT_FOUND", async (_name, key) => {
    expect(await verifyKey(t, key)).toEqual({ valid: false, reason: "NOT_FOUND" });
  });

  it("a real key differing in one character → NOT_FOUND", async () => {
    const key = (await createIssuedKey(t)).secret as string;
    const last = key.endsWith("A") ? "B" : "A";
    expect(await verifyKey(t, `${key.slice(0, -1)}${last}`)).toEqual({ valid: false, reason: "NOT_FOUND" });
  });

  it("expiry follows the injected clock: valid up to expire_time, EXPIRED from it", async () => {
    const expireAt = new Date(t.clock.now().getTime() + 60_000);
    const key = await createIssuedKey(t, { expire_time: expireAt.toISOString() });
    expect((await verifyKey(t, key.secret as string)).valid).toBe(true);
    t.clock.advance(59_999);
    expect((await verifyKey(t, key.secret as string)).valid).toBe(true);
    t.clock.advance(1);
    expect(await verifyKey(t, key.secret as string)).toEqual({ valid: false, reason: "EXPIRED", key_id: key.key_id });
    expect((await adminCall(t, "GET", `/issuedApiKeys/${key.key_id}`)).json().state).toBe("EXPIRED");
  });

  it("an expired key comes back to life when PATCH moves expire_time forward or clears it", async () => {
    const key = await createIssuedKey(t, { expire_time: new Date(t.clock.now().getTime() - 1).toISOString() });
    expect((await verifyKey(t, key.secret as string)).reason).toBe("EXPIRED");
    await adminCall(t, "PATCH", `/issuedApiKeys/${key.key_id}?update_mask=expire_time`, { issued_api_key: {} });
    expect((await verifyKey(t, key.secret as string)).valid).toBe(true);
  });

  it("imported keys expire too", async () => {
    await adminCall(t, "POST", "/importedApiKeys:batchCreate", {
      requests: [
        {
          raw_key: rawKey("imp-exp"),
          name: "n",
          actor_id: "a",
          expire_time: new Date(t.clock.now().getTime() + 1000).toISOString(),
        },
      ],
    });
    t.clock.advance(1000);
    expect((await verifyKey(t, rawKey("imp-exp"))).reason).toBe("EXPIRED");
  });

  it("a revoked key → REVOKED, even when also expired", async () => {
    const key = await createIssuedKey(t, { expire_time: new Date(t.clock.now().getTime() + 1000).toISOString() });
    await adminCall(t, "DELETE", `/issuedApiKeys/${key.key_id}`);
    expect(await verifyKey(t, key.secret as string)).toEqual({
      valid: false,
      reason: "REVOKED",
      key_id: key.key_id,
      revoke_reason: "ADMIN",
    });
    t.clock.advance(5000);
    expect((await verifyKey(t, key.secret as string)).reason).toBe("REVOKED");
  });

  it.each([
    ["no key", {}],
    ["an empty key", { key: "" }],
    ["a non-string key", { key: 12345 }],
  ])("a malformed request (%s) → 400, not a verification result", async (_name, body) => {
    const res = await adminCall(t, "POST", "/apiKeys:verify", body);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.status).toBe("INVALID_ARGUMENT");
  });

  it("never returns the secret it was given", async () => {
    const key = await createIssuedKey(t);
    const res = await adminCall(t, "POST", "/apiKeys:verify", { key: key.secret });
    expect(res.body).not.toContain(key.secret as string);
  });
});
