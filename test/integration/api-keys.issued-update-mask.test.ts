import { describe, expect, it } from "vitest";
import { createIssuedKey, verifyKey } from "../helpers/api-keys.js";
import { adminCall } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

const { t } = useTestApp();

const FULL = {
  name: "billing-worker",
  actor_id: "user-1",
  scopes: ["invoices:read", "invoices:write"],
  metadata: { team: "billing", env: "prod" },
  rate_limits: [{ name: "per_minute", limit: 100, period: "60s" }],
  expire_time: "2030-01-01T00:00:00.000Z",
};

async function freshKey(): Promise<{ id: string; secret: string }> {
  const k = await createIssuedKey(t, FULL);
  return { id: k.key_id as string, secret: k.secret as string };
}

const patch = (id: string, mask: string | undefined, resource: Record<string, unknown>) =>
  adminCall(t, "PATCH", `/issuedApiKeys/${id}${mask === undefined ? "" : `?update_mask=${encodeURIComponent(mask)}`}`, {
    issued_api_key: resource,
  });

describe("PATCH /issuedApiKeys/{key_id} with update_mask (AIP-134/161)", () => {
  it("without a mask changes exactly the populated fields", async () => {
    const { id } = await freshKey();
    const res = await patch(id, undefined, { key_id: id, scopes: ["invoices:read"] });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.scopes).toEqual(["invoices:read"]);
    expect(body).toMatchObject({
      name: FULL.name,
      actor_id: FULL.actor_id,
      metadata: FULL.metadata,
      rate_limits: FULL.rate_limits,
      expire_time: FULL.expire_time,
    });
    // The change is stored, not only echoed.
    expect((await adminCall(t, "GET", `/issuedApiKeys/${id}`)).json().scopes).toEqual(["invoices:read"]);
  });

  it("without a mask replaces a populated metadata map as a whole", async () => {
    const { id } = await freshKey();
    const res = await patch(id, undefined, { metadata: { team: "growth" } });
    expect(res.json().metadata).toEqual({ team: "growth" });
  });

  it("with a mask applies only the listed fields, ignoring other populated ones", async () => {
    const { id } = await freshKey();
    const res = await patch(id, "name", { name: "renamed", scopes: ["ignored"] });
    expect(res.statusCode).toBe(200);
    expect(res.json().name).toBe("renamed");
    expect(res.json().scopes).toEqual(FULL.scopes);
  });

  it("accepts several comma-separated paths and camelCase names", async () => {
    const { id } = await freshKey();
    const res = await patch(id, "name,rateLimits,expireTime", {
      name: "n2",
      rate_limits: [{ name: "per_hour", limit: 5, period: 3600 }],
      expire_time: "2031-06-30T12:00:00Z",
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      name: "n2",
      rate_limits: [{ name: "per_hour", limit: 5, period: "3600s" }],
      expire_time: "2031-06-30T12:00:00.000Z",
    });
  });

  it("accepts the mask as repeated update_mask parameters", async () => {
    const { id } = await freshKey();
    const res = await adminCall(t, "PATCH", `/issuedApiKeys/${id}?update_mask=name&update_mask=actor_id`, {
      issued_api_key: { name: "both", actor_id: "user-2", scopes: ["ignored"] },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ name: "both", actor_id: "user-2", scopes: FULL.scopes });
  });

  it.each([
    ["scopes", { scopes: [] }, { scopes: [] }],
    ["scopes", {}, { scopes: [] }],
    ["metadata", {}, { metadata: {} }],
    ["metadata", { metadata: null }, { metadata: {} }],
    ["rate_limits", {}, { rate_limits: [] }],
    ["expire_time", {}, { expire_time: null }],
    ["expire_time", { expire_time: "" }, { expire_time: null }],
    ["actor_id", {}, { actor_id: null }],
    ["name", { name: "" }, { name: "" }],
  ])("clears %s to its zero value when listed and left unset or empty (%j)", async (mask, resource, expected) => {
    const { id } = await freshKey();
    const res = await patch(id, mask, resource);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject(expected);
  });

  it("`*` replaces every mutable field: given ones set, unset ones cleared", async () => {
    const { id } = await freshKey();
    const res = await patch(id, "*", { name: "only-name", scopes: ["a"] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      name: "only-name",
      scopes: ["a"],
      metadata: {},
      rate_limits: [],
      expire_time: null,
      actor_id: null,
    });
  });

  it("`*` combined with another path is INVALID_ARGUMENT", async () => {
    const { id } = await freshKey();
    const res = await patch(id, "*,name", { name: "x" });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.status).toBe("INVALID_ARGUMENT");
  });

  describe("nested paths into metadata", () => {
    it("`metadata.team` sets one key and keeps the others", async () => {
      const { id } = await freshKey();
      const res = await patch(id, "metadata.team", { metadata: { team: "platform", env: "ignored" } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().metadata).toEqual({ team: "platform", env: "prod" });
    });

    it("`metadata.owner` adds a key that did not exist", async () => {
      const { id } = await freshKey();
      const res = await patch(id, "metadata.owner", { metadata: { owner: "ana" } });
      expect(res.json().metadata).toEqual({ team: "billing", env: "prod", owner: "ana" });
    });

    it("`metadata.team` left unset removes that key only", async () => {
      const { id } = await freshKey();
      const res = await patch(id, "metadata.team", {});
      expect(res.statusCode).toBe(200);
      expect(res.json().metadata).toEqual({ env: "prod" });
    });

    it("deeper paths create intermediate objects (`metadata.labels.tier`)", async () => {
      const { id } = await freshKey();
      const res = await patch(id, "metadata.labels.tier", { metadata: { labels: { tier: "gold" } } });
      expect(res.json().metadata).toEqual({ team: "billing", env: "prod", labels: { tier: "gold" } });
    });

    it("a parent and its child in one mask: the parent wins", async () => {
      const { id } = await freshKey();
      const res = await patch(id, "metadata,metadata.team", { metadata: { team: "x" } });
      expect(res.json().metadata).toEqual({ team: "x" });
    });
  });

  describe("refused masks and bodies", () => {
    it.each(["key_id", "secret", "create_time", "update_time", "prefix", "organization_id", "revoke_time", "state"])(
      "immutable path `%s` → 400 INVALID_ARGUMENT",
      async (path) => {
        const { id } = await freshKey();
        const res = await patch(id, path, { name: "x" });
        expect(res.statusCode).toBe(400);
        expect(res.json().error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
        expect(res.json().error.message).toContain(path);
        expect((await adminCall(t, "GET", `/issuedApiKeys/${id}`)).json().name).toBe(FULL.name);
      },
    );

    it.each(["colour", "scopes.x", "name,bogus", "metadata.", "rate_limits.name"])(
      "unknown path `%s` → 400 INVALID_ARGUMENT and nothing changes",
      async (path) => {
        const { id } = await freshKey();
        const res = await patch(id, path, { name: "changed" });
        expect(res.statusCode).toBe(400);
        expect(res.json().error.status).toBe("INVALID_ARGUMENT");
        expect((await adminCall(t, "GET", `/issuedApiKeys/${id}`)).json().name).toBe(FULL.name);
      },
    );

    it("an empty update_mask → 400", async () => {
      const { id } = await freshKey();
      const res = await patch(id, "", { name: "x" });
      expect(res.statusCode).toBe(400);
    });

    it("a key_id in the body that differs from the path → 400", async () => {
      const { id } = await freshKey();
      const other = await freshKey();
      const res = await patch(id, "name", { key_id: other.id, name: "x" });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toMatch(/key_id/);
      expect((await adminCall(t, "GET", `/issuedApiKeys/${other.id}`)).json().name).toBe(FULL.name);
    });

    it("a body without the issued_api_key wrapper → 400", async () => {
      const { id } = await freshKey();
      const res = await adminCall(t, "PATCH", `/issuedApiKeys/${id}?update_mask=name`, { name: "x" });
      expect(res.statusCode).toBe(400);
    });

    it.each([
      ["scopes", { scopes: "a" }],
      ["rate_limits", { rate_limits: [{ name: "m", limit: 0, period: "60s" }] }],
      ["rate_limits", { rate_limits: [{ name: "m", limit: 1, period: "1m" }] }],
      ["expire_time", { expire_time: "tomorrow" }],
      ["metadata", { metadata: ["not", "an", "object"] }],
      ["name", { name: 42 }],
    ])("a badly typed value for %s → 400", async (mask, resource) => {
      const { id } = await freshKey();
      const res = await patch(id, mask, resource);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.status).toBe("INVALID_ARGUMENT");
    });

    it("an unknown key → 404 NOT_FOUND", async () => {
      const res = await patch("01900000-0000-7000-8000-000000000000", "name", { name: "x" });
      expect(res.statusCode).toBe(404);
      expect(res.json().error.status).toBe("NOT_FOUND");
    });

    it("an imported key's id is not an issued key → 404", async () => {
      const imported = await adminCall(t, "POST", "/importedApiKeys:batchCreate", {
        requests: [{ raw_key: "imported-key-for-patch-0001", name: "i", actor_id: "a" }],
      });
      const id = imported.json().results[0].imported_api_key.key_id as string;
      expect((await patch(id, "name", { name: "x" })).statusCode).toBe(404);
    });
  });

  it("never touches the secret: the old secret still verifies, a secret in the body is ignored", async () => {
    const { id, secret } = await freshKey();
    const res = await patch(id, undefined, { name: "still-same-secret", secret: "rsk_attacker_chosen_secret_000000" });
    expect(res.statusCode).toBe(200);
    expect(res.json()).not.toHaveProperty("secret");
    expect(await verifyKey(t, secret)).toMatchObject({ valid: true, key_id: id, name: "still-same-secret" });
    expect(await verifyKey(t, "rsk_attacker_chosen_secret_000000")).toEqual({ valid: false, reason: "NOT_FOUND" });
  });

  it("moves update_time and keeps create_time", async () => {
    const { id } = await freshKey();
    const before = (await adminCall(t, "GET", `/issuedApiKeys/${id}`)).json();
    t.clock.advance(5_000);
    const after = (await patch(id, "name", { name: "later" })).json();
    expect(after.create_time).toBe(before.create_time);
    expect(Date.parse(after.update_time) - Date.parse(before.update_time)).toBe(5_000);
  });
});
