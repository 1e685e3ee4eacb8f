import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, PUBLIC_URL, USER_SCHEMA } from "../helpers/constants.js";
import { seedClient } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";
import type { TestApp } from "../helpers/app.js";

// ROSTER_TRUST_PROXY decides whether X-Forwarded-For/-Proto/-Host are believed. Believed (from a trusted peer, no
// ROSTER_PUBLIC_URL): meta.location, Location and scim_base_url carry the proxy's scheme and host. Not believed (off,
// or a peer outside the trusted ranges): the same forged headers change nothing. Requests come from 127.0.0.1.

const FORGED = {
  "x-forwarded-proto": "https",
  "x-forwarded-host": "idp-facing.example.com",
  "x-forwarded-for": "203.0.113.7",
};

async function createThroughProxy(t: TestApp) {
  const c = await seedClient(t);
  const created = await t.request({
    method: "POST",
    url: `${c.base}/Users`,
    headers: { ...c.headers, ...FORGED },
    payload: { schemas: [USER_SCHEMA], userName: `proxied-${c.clientId}@example.com` },
  });
  expect(created.statusCode, created.body).toBe(201);
  const client = await t.request({
    method: "GET",
    url: `/v2alpha1/admin/scimClients/${c.clientId}`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...FORGED },
  });
  expect(client.statusCode).toBe(200);
  return {
    clientId: c.clientId,
    location: created.json().meta.location as string,
    header: created.headers.location,
    baseUrl: client.json().scim_base_url as string,
  };
}

describe("trusted (ROSTER_TRUST_PROXY=127.0.0.1, no ROSTER_PUBLIC_URL)", () => {
  const { t } = useTestApp({ extra: { trustProxy: ["127.0.0.1"], publicUrlFromRequest: true } });

  it("meta.location, Location and scim_base_url use the forwarded scheme and host", async () => {
    const r = await createThroughProxy(t);
    const base = `https://idp-facing.example.com/scim/${r.clientId}/v2`;
    expect(r.location).toMatch(new RegExp(`^${base}/Users/[0-9a-f-]+$`));
    expect(r.header).toBe(r.location);
    expect(r.baseUrl).toBe(base);
  });

  it("a request without forwarded headers gets its own Host", async () => {
    const c = await seedClient(t);
    const res = await t.request({
      method: "GET",
      url: `/v2alpha1/admin/scimClients/${c.clientId}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, host: "roster.internal:8080" },
    });
    expect(res.json().scim_base_url).toBe(`http://roster.internal:8080/scim/${c.clientId}/v2`);
  });

  it("a forwarded host that is not a host falls back to the configured base", async () => {
    const c = await seedClient(t);
    const res = await t.request({
      method: "GET",
      url: `/v2alpha1/admin/scimClients/${c.clientId}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "x-forwarded-host": "evil.example/path?x=" },
    });
    expect(res.json().scim_base_url).toBe(`${PUBLIC_URL}/scim/${c.clientId}/v2`);
  });
});

describe("off (the default): forged X-Forwarded-* are ignored", () => {
  const { t } = useTestApp();

  it("meta.location and scim_base_url keep the configured public URL", async () => {
    const r = await createThroughProxy(t);
    expect(r.location.startsWith(`${PUBLIC_URL}/scim/${r.clientId}/v2/Users/`)).toBe(true);
    expect(r.baseUrl).toBe(`${PUBLIC_URL}/scim/${r.clientId}/v2`);
  });
});

describe("a peer outside the trusted ranges (ROSTER_TRUST_PROXY=10.0.0.0/8)", () => {
  const { t } = useTestApp({ extra: { trustProxy: ["10.0.0.0/8"], publicUrlFromRequest: true } });

  it("is not believed: the scheme is the connection's own", async () => {
    const r = await createThroughProxy(t);
    expect(r.location.startsWith("http://")).toBe(true);
    expect(r.location).not.toContain("idp-facing.example.com");
  });
});
