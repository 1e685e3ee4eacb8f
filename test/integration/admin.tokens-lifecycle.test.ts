import { describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { adminCall } from "../helpers/seed.js";
import { ADMIN_TOKEN } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

const { t: a, second: b } = useTestApp({ secondInstance: true });

const withToken = (t: TestApp, token: string, method: "GET" | "POST" | "DELETE", url: string, payload?: unknown) =>
  t.request({
    method,
    url: `/v2alpha1/admin${url}`,
    headers: { authorization: `Bearer ${token}` },
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });

describe("named admin tokens", () => {
  it("are created with the token shown once and stored only as a digest", async () => {
    const res = await adminCall(a, "POST", "/adminTokens", { name: "ci deploys", role: "admin" });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      name: "ci deploys",
      role: "admin",
      state: "ACTIVE",
      expire_time: null,
      revoke_time: null,
      last_used_time: null,
    });
    expect(body.token).toMatch(/^rat_[A-Za-z0-9_-]{43}$/);

    const got = await adminCall(a, "GET", `/adminTokens/${body.id}`);
    expect(got.json().token).toBeUndefined();
    expect(got.body).not.toContain(body.token);
    const listed = await adminCall(a, "GET", "/adminTokens");
    expect(listed.body).not.toContain(body.token);
    expect(listed.json().admin_tokens.map((x: { id: string }) => x.id)).toContain(body.id);
    const row = await a.db.selectFrom("admin_tokens").selectAll().where("id", "=", body.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(body.token);
    expect(row.digest.length).toBe(32);
  });

  it("an admin token can do what the bootstrap token can, and its last use is shown", async () => {
    const created = (await adminCall(a, "POST", "/adminTokens", { name: "ops", role: "admin" })).json();
    const at = a.clock.now().toISOString();
    const res = await withToken(a, created.token, "POST", "/organizations", { name: "From a named token" });
    expect(res.statusCode).toBe(201);
    const got = (await adminCall(a, "GET", `/adminTokens/${created.id}`)).json();
    expect(got.last_used_time).toBe(at);
    // The bootstrap token keeps working beside named ones.
    expect((await adminCall(a, "GET", "/organizations")).statusCode).toBe(200);
  });

  it("a revoked token is refused at once, on every instance", async () => {
    const created = (await adminCall(a, "POST", "/adminTokens", { name: "leaked", role: "admin" })).json();
    expect((await withToken(b, created.token, "GET", "/organizations")).statusCode).toBe(200);
    const revoked = await adminCall(a, "DELETE", `/adminTokens/${created.id}`);
    expect(revoked.json()).toMatchObject({ state: "REVOKED" });
    const res = await withToken(b, created.token, "GET", "/organizations");
    expect(res.statusCode).toBe(401);
    expect(res.json().error.status).toBe("UNAUTHENTICATED");
    const again = await adminCall(a, "DELETE", `/adminTokens/${created.id}`);
    expect(again.json().revoke_time).toBe(revoked.json().revoke_time);
  });

  it("a token stops at its expire_time by the server clock", async () => {
    const expire = new Date(a.clock.now().getTime() + 60_000);
    const created = (
      await adminCall(a, "POST", "/adminTokens", { name: "temp", role: "viewer", expire_time: expire.toISOString() })
    ).json();
    expect(created.expire_time).toBe(expire.toISOString());
    a.clock.advance(59_999);
    expect((await withToken(a, created.token, "GET", "/organizations")).statusCode).toBe(200);
    a.clock.advance(1);
    expect((await withToken(a, created.token, "GET", "/organizations")).statusCode).toBe(401);
    expect((await adminCall(a, "GET", `/adminTokens/${created.id}`)).json().state).toBe("EXPIRED");
  });

  it.each([
    [{ role: "admin" }, "name is required"],
    [{ name: "x", role: "owner" }, "role must be one of admin, viewer"],
    [{ name: "x" }, "role must be one of admin, viewer"],
    [{ name: "x", role: "admin", expire_time: "tomorrow" }, "expire_time must be an RFC 3339 timestamp"],
    [{ name: "x", role: "admin", expire_time: "2001-01-01T00:00:00Z" }, "expire_time must be in the future"],
  ])("refuses %j with 400", async (body, message) => {
    const res = await adminCall(a, "POST", "/adminTokens", body);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.status).toBe("INVALID_ARGUMENT");
    expect(res.json().error.message).toContain(message);
  });

  it("an unknown or malformed id is 404", async () => {
    expect((await adminCall(a, "GET", "/adminTokens/0197c3a2-5d1e-7c4b-9a7e-3f1d2c4b5a69")).statusCode).toBe(404);
    expect((await adminCall(a, "DELETE", "/adminTokens/nope")).statusCode).toBe(404);
  });

  it("a wrong token of the admin-token shape is 401", async () => {
    const res = await withToken(a, `rat_${"A".repeat(43)}`, "GET", "/organizations");
    expect(res.statusCode).toBe(401);
    expect(ADMIN_TOKEN.startsWith("rat_")).toBe(false);
  });
});
