import { beforeAll, describe, expect, it } from "vitest";
import { adminCall } from "../helpers/seed.js";
import { PUBLIC_URL } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

const { t } = useTestApp();
let orgId: string;
beforeAll(async () => {
  orgId = (await adminCall(t, "POST", "/organizations", { name: "Acme" })).json().id;
});

const spc = (clientId: string, secret: string) =>
  t.request({
    method: "GET",
    url: `/scim/${clientId}/v2/ServiceProviderConfig`,
    headers: { authorization: `Bearer ${secret}` },
  });

describe("SCIM clients", () => {
  it("generates a secret when none is given, returns it once, and stores only a hash", async () => {
    const res = await adminCall(t, "POST", "/scimClients", { organization_id: orgId, name: "Okta" });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.secret.length).toBeGreaterThanOrEqual(40);
    expect(body.scim_base_url).toBe(`${PUBLIC_URL}/scim/${body.client_id}/v2`);
    expect((await spc(body.client_id, body.secret)).statusCode).toBe(200);

    const got = (await adminCall(t, "GET", `/scimClients/${body.client_id}`)).json();
    expect(got.secret).toBeUndefined();
    expect(JSON.stringify(got)).not.toContain(body.secret);
    const row = await t.db
      .selectFrom("scim_clients")
      .select("secret_hash")
      .where("client_id", "=", body.client_id)
      .executeTakeFirstOrThrow();
    expect(row.secret_hash).not.toContain(body.secret);
  });

  it("does not echo a secret the caller chose", async () => {
    const res = await adminCall(t, "POST", "/scimClients", { organization_id: orgId, secret: "chosen-secret-123" });
    expect(res.statusCode).toBe(201);
    expect(res.json().secret).toBeUndefined();
    expect((await spc(res.json().client_id, "chosen-secret-123")).statusCode).toBe(200);
  });

  it.each([
    [{ organization_id: "nope" }, 400],
    [{}, 400],
    [{ organization_id: "00000000-0000-7000-8000-000000000000" }, 404],
    [{ secret: "Bearer abc" }, 400],
    [{ client_id: "has space" }, 400],
    [{ webhook: { url: "ftp://example.test/x" } }, 400],
    [{ mapping: "{ invalid jsonata (" }, 400],
  ])("rejects %j with %i", async (body, status) => {
    const payload =
      "organization_id" in body || Object.keys(body).length === 0 ? body : { organization_id: orgId, ...body };
    const res = await adminCall(t, "POST", "/scimClients", payload);
    expect(res.statusCode).toBe(status);
    expect(res.json().error.code).toBe(status);
  });

  it("refuses a taken client_id with 409 ALREADY_EXISTS", async () => {
    await adminCall(t, "POST", "/scimClients", { organization_id: orgId, client_id: "dup-client" });
    const res = await adminCall(t, "POST", "/scimClients", { organization_id: orgId, client_id: "dup-client" });
    expect(res.statusCode).toBe(409);
    expect(res.json().error.status).toBe("ALREADY_EXISTS");
  });

  it("lists clients of one organization", async () => {
    const other = (await adminCall(t, "POST", "/organizations", { name: "Other" })).json().id;
    const mine = (await adminCall(t, "POST", "/scimClients", { organization_id: other })).json().client_id;
    const res = await adminCall(t, "GET", `/scimClients?organization_id=${other}`);
    expect(res.json().scim_clients.map((c: { client_id: string }) => c.client_id)).toEqual([mine]);
  });

  describe("PATCH with update_mask", () => {
    it("changes only the masked fields", async () => {
      const c = (
        await adminCall(t, "POST", "/scimClients", { organization_id: orgId, name: "before", tenant: "t1" })
      ).json();
      const res = await adminCall(t, "PATCH", `/scimClients/${c.client_id}?update_mask=name`, {
        name: "after",
        tenant: "ignored",
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ name: "after", tenant: "t1" });
    });

    it("applies every populated field when the mask is omitted", async () => {
      const c = (await adminCall(t, "POST", "/scimClients", { organization_id: orgId })).json();
      const res = await adminCall(t, "PATCH", `/scimClients/${c.client_id}`, {
        auto_link: true,
        product: "roster",
        webhook: { url: "https://hooks.example.test/in", secret: "whsec-123-long-enough" },
      });
      expect(res.json()).toMatchObject({
        auto_link: true,
        product: "roster",
        webhook: { url: "https://hooks.example.test/in", secret_set: true },
      });
      expect(res.body).not.toContain("whsec-123-long-enough");
    });

    it("clears a listed field left empty", async () => {
      const c = (await adminCall(t, "POST", "/scimClients", { organization_id: orgId, tenant: "x" })).json();
      const res = await adminCall(t, "PATCH", `/scimClients/${c.client_id}?update_mask=tenant`, {});
      expect(res.json().tenant).toBe("");
    });

    it("rotates the shared secret", async () => {
      const c = (await adminCall(t, "POST", "/scimClients", { organization_id: orgId, secret: "old-secret-1" })).json();
      await adminCall(t, "PATCH", `/scimClients/${c.client_id}?update_mask=secret`, { secret: "new-secret-2" });
      expect((await spc(c.client_id, "old-secret-1")).statusCode).toBe(401);
      expect((await spc(c.client_id, "new-secret-2")).statusCode).toBe(200);
    });

    it.each([
      ["client_id", 400],
      ["organization_id", 400],
      ["no_such_field", 400],
      ["*,name", 400],
    ])("refuses update_mask=%s", async (mask, status) => {
      const c = (await adminCall(t, "POST", "/scimClients", { organization_id: orgId })).json();
      const res = await adminCall(t, "PATCH", `/scimClients/${c.client_id}?update_mask=${mask}`, { name: "x" });
      expect(res.statusCode).toBe(status);
      expect(res.json().error.status).toBe("INVALID_ARGUMENT");
    });

    it("answers 404 for an unknown client", async () => {
      expect((await adminCall(t, "PATCH", "/scimClients/nobody?update_mask=name", { name: "x" })).statusCode).toBe(404);
    });
  });

  it("deletes a client: its SCIM base URL answers 404 afterwards", async () => {
    const c = (await adminCall(t, "POST", "/scimClients", { organization_id: orgId, secret: "gone-secret" })).json();
    expect((await adminCall(t, "DELETE", `/scimClients/${c.client_id}`)).statusCode).toBe(200);
    expect((await spc(c.client_id, "gone-secret")).statusCode).toBe(404);
    expect((await adminCall(t, "DELETE", `/scimClients/${c.client_id}`)).statusCode).toBe(404);
  });
});
