import { describe, expect, it } from "vitest";
import { adminCall } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";
import { adminError } from "../helpers/errors.js";

const { t } = useTestApp();

describe("admin authentication", () => {
  it.each([
    ["no header", {}],
    ["wrong token", { authorization: "Bearer not-the-admin-token" }],
    ["SCIM-style bare token of another kind", { authorization: "Basic abc" }],
  ])("answers 401 UNAUTHENTICATED with %s", async (_name, headers) => {
    const res = await t.request({ method: "GET", url: "/v2alpha1/admin/organizations", headers });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ error: { code: 401, status: "UNAUTHENTICATED" } });
  });
});

describe("organizations", () => {
  it("creates, gets and lists organizations", async () => {
    const created = await adminCall(t, "POST", "/organizations", { name: "Globex" });
    expect(created.statusCode).toBe(201);
    const org = created.json();
    expect(org).toMatchObject({ name: "Globex" });
    expect(org.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number.isNaN(Date.parse(org.create_time))).toBe(false);

    const got = await adminCall(t, "GET", `/organizations/${org.id}`);
    expect(got.json()).toEqual(org);
  });

  it("rejects a missing name with the admin error body", async () => {
    const res = await adminCall(t, "POST", "/organizations", {});
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(adminError(400, "INVALID_ARGUMENT", "name is required"));
  });

  it("rejects undecodable JSON with 400 INVALID_ARGUMENT", async () => {
    const res = await t.request({
      method: "POST",
      url: "/v2alpha1/admin/organizations",
      headers: { authorization: "Bearer test-admin-token-0123456789", "content-type": "application/json" },
      payload: "{nope",
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.status).toBe("INVALID_ARGUMENT");
  });

  it("pages with page_size and page_token without repeating or skipping", async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add((await adminCall(t, "POST", "/organizations", { name: `p${i}` })).json().id);
    const seen: string[] = [];
    let token = "";
    for (let guard = 0; guard < 50; guard++) {
      const res = await adminCall(t, "GET", `/organizations?page_size=2&page_token=${token}`);
      const body = res.json();
      expect(body.organizations.length).toBeLessThanOrEqual(2);
      seen.push(...body.organizations.map((o: { id: string }) => o.id));
      token = body.next_page_token;
      if (token === "") break;
    }
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of ids) expect(seen).toContain(id);
  });

  it("answers 404 for an unknown or malformed id", async () => {
    expect((await adminCall(t, "GET", "/organizations/00000000-0000-7000-8000-000000000000")).statusCode).toBe(404);
    expect((await adminCall(t, "GET", "/organizations/not-a-uuid")).statusCode).toBe(404);
  });

  it("deleting an organization removes its SCIM clients", async () => {
    const org = (await adminCall(t, "POST", "/organizations", { name: "Doomed" })).json();
    const client = (
      await adminCall(t, "POST", "/scimClients", { organization_id: org.id, secret: "s3cret-value" })
    ).json();
    expect((await adminCall(t, "DELETE", `/organizations/${org.id}`)).statusCode).toBe(200);
    expect((await adminCall(t, "GET", `/organizations/${org.id}`)).statusCode).toBe(404);
    expect((await adminCall(t, "GET", `/scimClients/${client.client_id}`)).statusCode).toBe(404);
    const scim = await t.request({
      method: "GET",
      url: `/scim/${client.client_id}/v2/ServiceProviderConfig`,
      headers: { authorization: "Bearer s3cret-value" },
    });
    expect(scim.statusCode).toBe(404);
  });

  it("answers unknown admin routes with the admin error body", async () => {
    const res = await adminCall(t, "GET", "/nothing-here");
    expect(res.statusCode).toBe(404);
    expect(res.json().error.status).toBe("NOT_FOUND");
  });
});
