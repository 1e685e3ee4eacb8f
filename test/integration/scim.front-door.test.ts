import { describe, expect, it } from "vitest";
import { seedClient } from "../helpers/seed.js";
import { ERROR_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

const { t, c } = useTestApp({ seed: true });

const get = (path: string, authorization?: string) =>
  t.request({
    method: "GET",
    url: `${c.base}${path}`,
    headers: authorization === undefined ? {} : { authorization },
  });

describe("authentication", () => {
  it("rejects a request without Authorization: 401 `no authorization header found`", async () => {
    const res = await get("/ServiceProviderConfig");
    expect(res.statusCode).toBe(401);
    expect(res.headers["content-type"]).toMatch(/^application\/scim\+json/);
    expect(res.json()).toEqual({ schemas: [ERROR_SCHEMA], status: "401", detail: "no authorization header found" });
  });

  it.each([
    ["wrong secret", "Bearer nope"],
    ["secret with a typo in case", () => `Bearer ${c.secret.toUpperCase()}`],
    ["bearer only", "Bearer"],
    ["double Bearer prefix", () => `Bearer Bearer ${c.secret}`],
  ])("rejects %s: 401 `invalid authorization header`", async (_name, header) => {
    const res = await get("/ServiceProviderConfig", typeof header === "function" ? header() : header);
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toBe("invalid authorization header");
  });

  it.each([
    ["Bearer <secret>", () => `Bearer ${c.secret}`],
    ["bare secret", () => c.secret],
    ["lower-case bearer", () => `bearer ${c.secret}`],
    ["BEARER with surrounding whitespace", () => `  BEARER   ${c.secret}  `],
  ])("accepts %s", async (_name, header) => {
    const res = await get("/ServiceProviderConfig", header());
    expect(res.statusCode).toBe(200);
  });

  it("answers 404 for an unknown client, even with a valid secret of another client", async () => {
    const res = await t.request({
      method: "GET",
      url: "/scim/no-such-client/v2/ServiceProviderConfig",
      headers: { authorization: `Bearer ${c.secret}` },
    });
    expect(res.statusCode).toBe(404);
    expect(res.json().schemas).toEqual([ERROR_SCHEMA]);
  });

  it("does not accept one client's secret for another client", async () => {
    const other = await seedClient(t);
    const res = await get("/ServiceProviderConfig", `Bearer ${other.secret}`);
    expect(res.statusCode).toBe(401);
  });
});

describe("errors are SCIM errors", () => {
  it("renders unknown routes as 404 SCIM errors", async () => {
    const res = await get("/Nope", `Bearer ${c.secret}`);
    expect(res.statusCode).toBe(404);
    expect(res.headers["content-type"]).toMatch(/^application\/scim\+json/);
    expect(res.json()).toMatchObject({ schemas: [ERROR_SCHEMA], status: "404" });
  });

  it.each(["/Bulk", "/Me"])("does not serve %s", async (path) => {
    const res = await t.request({ method: "POST", url: `${c.base}${path}`, headers: c.headers, payload: "{}" });
    expect(res.statusCode).toBe(404);
    expect(res.json().detail).toMatch(/not supported/);
  });

  it("matches endpoint names case-insensitively (Microsoft's suite calls /users)", async () => {
    const res = await get("/serviceproviderconfig", `Bearer ${c.secret}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().patch).toEqual({ supported: true });
  });

  it("answers 405 for a wrong method on a known path", async () => {
    const res = await t.request({ method: "DELETE", url: `${c.base}/ServiceProviderConfig`, headers: c.headers });
    expect(res.statusCode).toBe(405);
    expect(res.json()).toMatchObject({ schemas: [ERROR_SCHEMA], status: "405" });
    expect(res.headers.allow).toBe("GET");
  });

  it("answers 415 for a body that is neither application/scim+json nor application/json", async () => {
    const res = await t.request({
      method: "POST",
      url: `${c.base}/Users`,
      headers: { authorization: `Bearer ${c.secret}`, "content-type": "text/plain" },
      payload: "hello",
    });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toMatchObject({ schemas: [ERROR_SCHEMA], status: "415" });
  });

  it("answers 413 for a body over 16 MiB", async () => {
    const res = await t.request({
      method: "POST",
      url: `${c.base}/Users`,
      headers: { ...c.headers },
      payload: `{"a":"${"x".repeat(16 * 1024 * 1024 + 10)}"}`,
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ schemas: [ERROR_SCHEMA], status: "413" });
  });
});
