import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { MAX_ADMIN_JSON_DEPTH } from "../../src/admin/limits.js";
import { adminCall, adminHeaders } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

/** Admin input PostgreSQL cannot store is refused with 400 INVALID_ARGUMENT in the admin error body. */
const { t } = useTestApp();
let orgId: string;
let clientId: string;
let keyId: string;

beforeAll(async () => {
  orgId = (await adminCall(t, "POST", "/organizations", { name: "Acme" })).json().id;
  clientId = (await adminCall(t, "POST", "/scimClients", { organization_id: orgId })).json().client_id;
  keyId = (await adminCall(t, "POST", "/issuedApiKeys", { organization_id: orgId, name: "k" })).json().key_id;
});

const rowCounts = async () => {
  const { rows } = await sql<{ n: string }>`
    select (select count(*) from organizations) || '/' || (select count(*) from scim_clients) || '/' ||
      (select count(*) from api_keys) || '/' || (select count(*) from api_key_secrets) as n`.execute(t.db);
  return rows[0]?.n;
};

const expectInvalid = (res: { statusCode: number; headers: Record<string, unknown>; json(): unknown }) => {
  expect(res.statusCode).toBe(400);
  expect(String(res.headers["content-type"])).toMatch(/^application\/json/);
  const body = res.json() as { error: { code: number; status: string; message: string } };
  expect(body.error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
  return body.error.message;
};

const deep = (depth: number): string => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

describe("NUL, lone surrogates and deep nesting in admin bodies", () => {
  it.each([
    ["an organization name with NUL", "POST", "/organizations", { name: "a\u0000" }, "name", "NUL"],
    ["an organization name with a lone surrogate", "POST", "/organizations", { name: "a\ud800" }, "name", "surrogate"],
    ["a SCIM client's name", "POST", "/scimClients", () => ({ organization_id: orgId, name: "\u0000" }), "name", "NUL"],
    [
      "a SCIM client's secret",
      "POST",
      "/scimClients",
      () => ({ organization_id: orgId, secret: "s\u0000".repeat(20) }),
      "secret",
      "NUL",
    ],
    [
      "a SCIM client's webhook secret",
      "PATCH",
      () => `/scimClients/${clientId}`,
      { webhook: { url: "http://127.0.0.1:9/x", secret: "\udfff".repeat(20) } },
      "webhook.secret",
      "surrogate",
    ],
    ["an API key name", "POST", "/issuedApiKeys", () => ({ organization_id: orgId, name: "k\u0000" }), "name", "NUL"],
    [
      "an API key actor_id",
      "POST",
      "/issuedApiKeys",
      () => ({ organization_id: orgId, name: "k", actor_id: "\u0000" }),
      "actor_id",
      "NUL",
    ],
    [
      "an API key scope",
      "POST",
      "/issuedApiKeys",
      () => ({ organization_id: orgId, name: "k", scopes: ["read", "\u0000"] }),
      "scopes[1]",
      "NUL",
    ],
    [
      "an API key metadata value",
      "POST",
      "/issuedApiKeys",
      () => ({ organization_id: orgId, name: "k", metadata: { team: "a\u0000" } }),
      "metadata.team",
      "NUL",
    ],
    [
      "an API key metadata key",
      "POST",
      "/issuedApiKeys",
      () => ({ organization_id: orgId, name: "k", metadata: { "t\u0000": 1 } }),
      "metadata",
      "NUL",
    ],
    [
      "an update of an API key",
      "PATCH",
      () => `/issuedApiKeys/${keyId}?update_mask=name`,
      { issued_api_key: { name: "\u0000" } },
      "issued_api_key.name",
      "NUL",
    ],
    [
      "an imported raw key",
      "POST",
      "/importedApiKeys:batchCreate",
      { requests: [{ raw_key: `raw-${"\u0000".repeat(30)}`, name: "n", actor_id: "a" }] },
      "requests[0].raw_key",
      "NUL",
    ],
    ["a key to verify", "POST", "/apiKeys:verify", { key: "k\u0000" }, "key", "NUL"],
    [
      "an identifier to verify",
      "POST",
      "/identities:verifyPassword",
      { identifier: "a\ud800", password: "x" },
      "identifier",
      "surrogate",
    ],
  ])("%s: 400 naming where", async (_name, method, path, payload, where, what) => {
    const before = await rowCounts();
    const url = typeof path === "function" ? path() : path;
    const body = typeof payload === "function" ? payload() : payload;
    const message = expectInvalid(await adminCall(t, method as "POST", url, body));
    expect(message).toContain(where);
    expect(message).toContain(what);
    expect(await rowCounts()).toBe(before);
  });

  it.each([
    [
      "API key metadata nested 7 000 deep",
      "/issuedApiKeys",
      () => `{"organization_id":"${orgId}","name":"k","metadata":${deep(7000)}}`,
    ],
    ["an organization body nested 100 000 deep", "/organizations", () => `{"name":"n","x":${deep(100_000)}}`],
    ["imported keys nested 50 000 deep", "/importedApiKeys:batchCreate", () => `{"requests":[${deep(50_000)}]}`],
  ])("%s: 400, never a stack overflow", async (_name, path, payload) => {
    const before = await rowCounts();
    const res = await t.request({
      method: "POST",
      url: `/v2alpha1/admin${path}`,
      headers: { ...adminHeaders, "content-type": "application/json" },
      payload: payload(),
    });
    expect(expectInvalid(res)).toContain(`nested more than ${MAX_ADMIN_JSON_DEPTH} levels deep`);
    expect(await rowCounts()).toBe(before);
  });

  it("accepts metadata nested as deep as real metadata is", async () => {
    const res = await adminCall(t, "POST", "/issuedApiKeys", {
      organization_id: orgId,
      name: "k",
      metadata: { a: { b: { c: [1, { d: "ok" }] } } },
    });
    expect(res.statusCode, res.body).toBe(201);
  });
});

describe("query parameters and paths", () => {
  it.each([
    ["a NUL in page_token", "/issuedApiKeys?page_token=%00", 400],
    ["a NUL in a filter parameter", `/issuedApiKeys?actor_id=%00`, 400],
    ["an encoded lone surrogate (not UTF-8) in a path id", "/organizations/%ED%A0%80", 400],
    ["a NUL in a path id", "/scimClients/%00", 400],
    ["a bad percent-encoding", "/organizations/%zz", 400],
    ["an id over 100 characters", `/organizations/${"o".repeat(101)}`, 404],
  ])("%s: %s in the admin error body", async (_name, path, status) => {
    const res = await t.request({ method: "GET", url: `/v2alpha1/admin${path}`, headers: adminHeaders });
    expect(res.statusCode, res.body).toBe(status);
    expect(res.json()).toMatchObject({ error: { code: status } });
  });
});

describe("admin protocol details", () => {
  it.each([
    ["no header", {}],
    ["a wrong token", { authorization: "Bearer wrong" }],
  ])("a 401 with %s carries WWW-Authenticate", async (_name, headers) => {
    const res = await t.request({ method: "GET", url: "/v2alpha1/admin/organizations", headers });
    expect(res.statusCode).toBe(401);
    expect(res.headers["www-authenticate"]).toBe('Bearer realm="roster-admin"');
    expect(res.json()).toMatchObject({ error: { code: 401, status: "UNAUTHENTICATED" } });
  });

  it("a path under no scope is 404 before its body is read, and nothing else answers it", async () => {
    const res = await t.request({
      method: "POST",
      url: "/nothing-here",
      headers: { "content-type": "application/json" },
      payload: "{not json",
    });
    expect(res.statusCode).toBe(404);
    expect(res.body).toContain("no endpoint POST /nothing-here");
  });

  it("an unknown route is 404 before its body is read", async () => {
    const res = await t.request({
      method: "POST",
      url: "/v2alpha1/admin/nothingHere",
      headers: { ...adminHeaders, "content-type": "application/json" },
      payload: "{not json",
    });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: { code: 404, status: "NOT_FOUND" } });
  });
});
