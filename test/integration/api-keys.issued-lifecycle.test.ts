import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { createIssuedKey, verifyKey } from "../helpers/api-keys.js";
import { adminCall } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

const { t } = useTestApp();
let orgA: string;
let orgB: string;
beforeAll(async () => {
  orgA = (await adminCall(t, "POST", "/organizations", { name: "A" })).json().id;
  orgB = (await adminCall(t, "POST", "/organizations", { name: "B" })).json().id;
});

describe("POST /issuedApiKeys", () => {
  it("answers 201 with the key and its secret, shown this once", async () => {
    const res = await adminCall(t, "POST", "/issuedApiKeys", {
      name: "deploy bot",
      organization_id: orgA,
      actor_id: "svc-deploy",
      scopes: ["deploy", "deploy", "read"],
      metadata: { team: "infra" },
      rate_limits: [{ name: "per_minute", limit: 10, period: "60s" }],
      expire_time: "2030-01-01T00:00:00Z",
    });
    expect(res.statusCode, res.body).toBe(201);
    const key = res.json();
    expect(key).toEqual({
      key_id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      prefix: expect.stringMatching(/^rsk_[0-9a-f]{8}$/),
      secret: expect.any(String),
      name: "deploy bot",
      organization_id: orgA,
      actor_id: "svc-deploy",
      scopes: ["deploy", "read"],
      metadata: { team: "infra" },
      rate_limits: [{ name: "per_minute", limit: 10, period: "60s" }],
      expire_time: "2030-01-01T00:00:00.000Z",
      state: "ACTIVE",
      revoke_time: null,
      revoke_reason: null,
      create_time: t.clock.now().toISOString(),
      update_time: t.clock.now().toISOString(),
    });
    // Visible prefix, then 32 random bytes (43 base64url characters).
    expect(key.secret).toMatch(new RegExp(`^${key.prefix}_[A-Za-z0-9_-]{43}$`));
  });

  it("generates a different secret every time", async () => {
    const a = await createIssuedKey(t);
    const b = await createIssuedKey(t);
    expect(a.secret).not.toBe(b.secret);
    expect(a.prefix).not.toBe(b.prefix);
  });

  it("stores the secret only as its SHA-256 digest", async () => {
    const key = await createIssuedKey(t, { name: "digest-check" });
    const secret = key.secret as string;
    const rows = await sql<{ hex: string; dump: string }>`
      select encode(s.digest, 'hex') as hex, row_to_json(k)::text || row_to_json(s)::text as dump
      from api_key_secrets s join api_keys k using (key_id) where k.key_id = ${key.key_id}
    `.execute(t.db);
    expect(rows.rows).toHaveLength(1);
    const { createHash } = await import("node:crypto");
    expect(rows.rows[0]?.hex).toBe(createHash("sha256").update(secret).digest("hex"));
    expect(rows.rows[0]?.dump).not.toContain(secret.slice(13));
  });

  it.each([
    ["no name", {}],
    ["empty name", { name: "" }],
    ["non-UUID organization_id", { name: "x", organization_id: "acme" }],
    ["scopes not strings", { name: "x", scopes: [1] }],
    ["metadata not an object", { name: "x", metadata: "team" }],
    ["rate limit period with a unit other than s", { name: "x", rate_limits: [{ name: "m", limit: 1, period: "1h" }] }],
    [
      "repeated rate limit names",
      {
        name: "x",
        rate_limits: [
          { name: "m", limit: 1, period: 60 },
          { name: "m", limit: 2, period: 60 },
        ],
      },
    ],
    ["expire_time without an offset", { name: "x", expire_time: "2030-01-01T00:00:00" }],
  ])("refuses %s → 400 INVALID_ARGUMENT", async (_name, body) => {
    const res = await adminCall(t, "POST", "/issuedApiKeys", body);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT", details: [] });
  });

  it("refuses an organization that does not exist → 404", async () => {
    const res = await adminCall(t, "POST", "/issuedApiKeys", {
      name: "x",
      organization_id: "01900000-0000-7000-8000-000000000000",
    });
    expect(res.statusCode).toBe(404);
  });

  it("requires the admin token (Authorization: Bearer <ROSTER_ADMIN_TOKEN>)", async () => {
    const none = await t.request({ method: "POST", url: "/v2alpha1/admin/issuedApiKeys", payload: { name: "x" } });
    expect(none.statusCode).toBe(401);
    const wrong = await t.request({
      method: "POST",
      url: "/v2alpha1/admin/apiKeys:verify",
      headers: { authorization: "Bearer nope" },
      payload: { key: "x" },
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error.status).toBe("UNAUTHENTICATED");
  });
});

describe("GET /issuedApiKeys/{key_id} and the list", () => {
  it("returns the key without its secret", async () => {
    const created = await createIssuedKey(t, { name: "readable" });
    const res = await adminCall(t, "GET", `/issuedApiKeys/${created.key_id}`);
    expect(res.statusCode).toBe(200);
    const { secret: _secret, ...withoutSecret } = created;
    expect(res.json()).toEqual(withoutSecret);
    expect(res.body).not.toContain(created.secret as string);
  });

  it.each(["01900000-0000-7000-8000-000000000000", "not-a-uuid"])("unknown key %s → 404", async (id) => {
    const res = await adminCall(t, "GET", `/issuedApiKeys/${id}`);
    expect(res.statusCode).toBe(404);
    expect(res.json().error.status).toBe("NOT_FOUND");
  });

  it("routes GET /issuedApiKeys/{id}:rotate as a (missing) key, never as rotation", async () => {
    const created = await createIssuedKey(t);
    const res = await adminCall(t, "GET", `/issuedApiKeys/${created.key_id}:rotate`);
    expect(res.statusCode).toBe(404);
    expect(await verifyKey(t, created.secret as string)).toMatchObject({ valid: true });
  });

  it("answers 404 for an unknown custom method", async () => {
    const created = await createIssuedKey(t);
    const res = await adminCall(t, "POST", `/issuedApiKeys/${created.key_id}:explode`, {});
    expect(res.statusCode).toBe(404);
  });

  it("lists without secrets, pages with page_size/page_token, filters by organization and actor", async () => {
    const mine = [];
    for (let i = 0; i < 5; i++) {
      mine.push(
        await createIssuedKey(t, { name: `list-${i}`, organization_id: orgB, actor_id: i % 2 === 0 ? "even" : "odd" }),
      );
    }
    const seen: string[] = [];
    let token = "";
    let pages = 0;
    do {
      const res = await adminCall(t, "GET", `/issuedApiKeys?organization_id=${orgB}&page_size=2&page_token=${token}`);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      for (const k of body.issued_api_keys) {
        expect(k).not.toHaveProperty("secret");
        seen.push(k.key_id);
      }
      for (const m of mine) expect(res.body).not.toContain(m.secret as string);
      token = body.next_page_token;
      pages++;
    } while (token !== "" && pages < 10);
    expect(pages).toBe(3);
    // Every key exactly once, in key_id order (UUIDv7: creation order across milliseconds).
    expect(seen).toEqual(mine.map((k) => k.key_id as string).sort());

    const even = await adminCall(t, "GET", `/issuedApiKeys?organization_id=${orgB}&actor_id=even`);
    expect(
      even
        .json()
        .issued_api_keys.map((k: { name: string }) => k.name)
        .sort(),
    ).toEqual(["list-0", "list-2", "list-4"]);
  });

  it("refuses a bad page_token and a non-UUID organization filter", async () => {
    expect((await adminCall(t, "GET", "/issuedApiKeys?page_token=zzz")).statusCode).toBe(400);
    expect((await adminCall(t, "GET", "/issuedApiKeys?organization_id=acme")).statusCode).toBe(400);
  });
});

describe("DELETE /issuedApiKeys/{key_id} revokes", () => {
  it("sets revoke_time, keeps the key readable, hides it from the list unless show_revoked=true", async () => {
    const org = (await adminCall(t, "POST", "/organizations", { name: "revocations" })).json().id;
    const key = await createIssuedKey(t, { name: "to-revoke", organization_id: org });
    t.clock.advance(1000);
    const res = await adminCall(t, "DELETE", `/issuedApiKeys/${key.key_id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      key_id: key.key_id,
      state: "REVOKED",
      revoke_time: t.clock.now().toISOString(),
    });
    expect(res.json()).not.toHaveProperty("secret");

    const got = await adminCall(t, "GET", `/issuedApiKeys/${key.key_id}`);
    expect(got.json()).toMatchObject({ state: "REVOKED", revoke_time: t.clock.now().toISOString() });

    expect((await adminCall(t, "GET", `/issuedApiKeys?organization_id=${org}`)).json().issued_api_keys).toEqual([]);
    const shown = await adminCall(t, "GET", `/issuedApiKeys?organization_id=${org}&show_revoked=true`);
    expect(shown.json().issued_api_keys.map((k: { key_id: string }) => k.key_id)).toEqual([key.key_id]);

    expect(await verifyKey(t, key.secret as string)).toEqual({
      valid: false,
      reason: "REVOKED",
      key_id: key.key_id,
      revoke_reason: "ADMIN",
    });
  });

  it("is idempotent: revoking again keeps the first revoke_time", async () => {
    const key = await createIssuedKey(t);
    const first = (await adminCall(t, "DELETE", `/issuedApiKeys/${key.key_id}`)).json();
    t.clock.advance(60_000);
    const second = await adminCall(t, "DELETE", `/issuedApiKeys/${key.key_id}`);
    expect(second.statusCode).toBe(200);
    expect(second.json().revoke_time).toBe(first.revoke_time);
  });

  it("a revoked key cannot be changed or rotated → 412 FAILED_PRECONDITION", async () => {
    const key = await createIssuedKey(t);
    await adminCall(t, "DELETE", `/issuedApiKeys/${key.key_id}`);
    const patched = await adminCall(t, "PATCH", `/issuedApiKeys/${key.key_id}`, { issued_api_key: { name: "x" } });
    expect(patched.statusCode).toBe(412);
    expect(patched.json().error.status).toBe("FAILED_PRECONDITION");
    const rotated = await adminCall(t, "POST", `/issuedApiKeys/${key.key_id}:rotate`, {});
    expect(rotated.statusCode).toBe(412);
  });

  it("unknown key → 404", async () => {
    expect((await adminCall(t, "DELETE", "/issuedApiKeys/01900000-0000-7000-8000-000000000000")).statusCode).toBe(404);
  });

  it("deleting the organization deletes its keys", async () => {
    const org = (await adminCall(t, "POST", "/organizations", { name: "short-lived" })).json().id;
    const key = await createIssuedKey(t, { organization_id: org });
    await adminCall(t, "DELETE", `/organizations/${org}`);
    expect((await adminCall(t, "GET", `/issuedApiKeys/${key.key_id}`)).statusCode).toBe(404);
    expect(await verifyKey(t, key.secret as string)).toEqual({ valid: false, reason: "NOT_FOUND" });
  });
});
