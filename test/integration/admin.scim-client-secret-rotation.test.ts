import { describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { adminCall, type SeededClient, seedClient } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

// A second Roster instance on the same database, sharing the clock but not the client cache.
const { t: a, second: b } = useTestApp({ secondInstance: true });

const usersWith = (t: TestApp, c: SeededClient, secret: string) =>
  t.request({ method: "GET", url: `${c.base}/Users`, headers: { authorization: `Bearer ${secret}` } });

const rotate = (t: TestApp, clientId: string, body?: unknown) =>
  adminCall(t, "POST", `/scimClients/${clientId}:rotateSecret`, body);

describe("POST /scimClients/{client_id}:rotateSecret", () => {
  it("with a grace period both secrets work until it ends, then only the new one", async () => {
    const c = await seedClient(a);
    const start = a.clock.now().getTime();
    const res = await rotate(a, c.clientId, { grace_period: "3600s" });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    const newSecret = body.secret as string;
    expect(newSecret.length).toBeGreaterThanOrEqual(40);
    expect(body).toMatchObject({
      client_id: c.clientId,
      secret_rotate_time: new Date(start).toISOString(),
      previous_secret_expire_time: new Date(start + 3_600_000).toISOString(),
      previous_secret_last_used_time: null,
    });

    expect((await usersWith(a, c, c.secret)).statusCode).toBe(200);
    expect((await usersWith(a, c, newSecret)).statusCode).toBe(200);

    const got = (await adminCall(a, "GET", `/scimClients/${c.clientId}`)).json();
    expect(got.secret).toBeUndefined();
    expect(got).toMatchObject({
      secret_rotate_time: new Date(start).toISOString(),
      previous_secret_expire_time: new Date(start + 3_600_000).toISOString(),
    });

    a.clock.advance(3_600_000 - 1);
    expect((await usersWith(a, c, c.secret)).statusCode).toBe(200);
    a.clock.advance(1);
    const old = await usersWith(a, c, c.secret);
    expect(old.statusCode).toBe(401);
    expect(old.json().detail).toBe("invalid authorization header");
    expect((await usersWith(a, c, newSecret)).statusCode).toBe(200);
  });

  it("records when the previous secret last authenticated, and only then", async () => {
    const c = await seedClient(a);
    const newSecret = (await rotate(a, c.clientId, { grace_period: 600 })).json().secret as string;
    expect((await usersWith(a, c, newSecret)).statusCode).toBe(200);
    let got = (await adminCall(a, "GET", `/scimClients/${c.clientId}`)).json();
    expect(got.previous_secret_last_used_time).toBeNull();

    const usedAt = a.clock.now().toISOString();
    expect((await usersWith(a, c, c.secret)).statusCode).toBe(200);
    got = (await adminCall(a, "GET", `/scimClients/${c.clientId}`)).json();
    expect(got.previous_secret_last_used_time).toBe(usedAt);
  });

  it("without a grace period the old secret stops at once", async () => {
    const c = await seedClient(a);
    const res = await rotate(a, c.clientId);
    expect(res.statusCode).toBe(200);
    expect(res.json().previous_secret_expire_time).toBeNull();
    expect((await usersWith(a, c, c.secret)).statusCode).toBe(401);
    expect((await usersWith(a, c, res.json().secret)).statusCode).toBe(200);
  });

  it("a second rotation keeps only the secret it replaces: at most two are live", async () => {
    const c = await seedClient(a);
    const second = (await rotate(a, c.clientId, { grace_period: "3600s" })).json().secret as string;
    const third = (await rotate(a, c.clientId, { grace_period: "3600s" })).json().secret as string;
    expect((await usersWith(a, c, c.secret)).statusCode).toBe(401);
    expect((await usersWith(a, c, second)).statusCode).toBe(200);
    expect((await usersWith(a, c, third)).statusCode).toBe(200);
  });

  it("setting a secret with PATCH ends any grace period (the emergency path)", async () => {
    const c = await seedClient(a);
    const rotated = (await rotate(a, c.clientId, { grace_period: "3600s" })).json().secret as string;
    const chosen = "chosen-after-a-leak-0123456789";
    const patched = await adminCall(a, "PATCH", `/scimClients/${c.clientId}?update_mask=secret`, { secret: chosen });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().previous_secret_expire_time).toBeNull();
    expect(patched.json().secret_rotate_time).toBe(a.clock.now().toISOString());
    expect((await usersWith(a, c, c.secret)).statusCode).toBe(401);
    expect((await usersWith(a, c, rotated)).statusCode).toBe(401);
    expect((await usersWith(a, c, chosen)).statusCode).toBe(200);
  });

  it.each([
    [{ grace_period: "604801s" }, 400],
    [{ grace_period: "1h" }, 400],
    [{ grace_period: -5 }, 400],
    ["[]", 400],
  ])("refuses %j with %i in the admin error body", async (body, status) => {
    const c = await seedClient(a);
    const res =
      typeof body === "string"
        ? await a.request({
            method: "POST",
            url: `/v2alpha1/admin/scimClients/${c.clientId}:rotateSecret`,
            headers: { authorization: "Bearer test-admin-token-0123456789", "content-type": "application/json" },
            payload: body,
          })
        : await rotate(a, c.clientId, body);
    expect(res.statusCode).toBe(status);
    expect(res.json().error.status).toBe("INVALID_ARGUMENT");
    expect((await usersWith(a, c, c.secret)).statusCode).toBe(200);
  });

  it("accepts the longest grace period, seven days", async () => {
    const c = await seedClient(a);
    const res = await rotate(a, c.clientId, { grace_period: "604800s" });
    expect(res.statusCode).toBe(200);
  });

  it("an unknown client is 404", async () => {
    const res = await rotate(a, "no-such-client", { grace_period: "60s" });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.status).toBe("NOT_FOUND");
  });
});

describe("secret rotation across instances", () => {
  it("the new secret works at once on an instance that had the client cached", async () => {
    const c = await seedClient(a);
    // Instance b caches the client with its current secret.
    expect((await usersWith(b, c, c.secret)).statusCode).toBe(200);
    const newSecret = (await rotate(a, c.clientId, { grace_period: "3600s" })).json().secret as string;
    expect((await usersWith(b, c, newSecret)).statusCode).toBe(200);
    expect((await usersWith(b, c, c.secret)).statusCode).toBe(200);
    // ... and the grace period ends on b exactly when it ends on a.
    a.clock.advance(3_600_000);
    expect((await usersWith(b, c, c.secret)).statusCode).toBe(401);
    expect((await usersWith(b, c, newSecret)).statusCode).toBe(200);
  });

  it("a client created through one instance is found at once by another that had looked it up before", async () => {
    const orgId = (await adminCall(a, "POST", "/organizations", { name: "Late" })).json().id as string;
    const clientId = `late-${Math.random().toString(36).slice(2)}`;
    const miss = await b.request({ method: "GET", url: `/scim/${clientId}/v2/Users`, headers: {} });
    expect(miss.statusCode).toBe(404);
    const created = await adminCall(a, "POST", "/scimClients", { organization_id: orgId, client_id: clientId });
    expect(created.statusCode).toBe(201);
    const res = await b.request({
      method: "GET",
      url: `/scim/${clientId}/v2/Users`,
      headers: { authorization: `Bearer ${created.json().secret}` },
    });
    expect(res.statusCode).toBe(200);
  });
});
