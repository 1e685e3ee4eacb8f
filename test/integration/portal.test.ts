import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.js";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

describe("admin portal", () => {
  it.each([
    ["/portal/", /^text\/html/, "<title>Roster admin portal</title>"],
    ["/portal", /^text\/html/, 'src="portal.js"'],
    ["/portal/portal.js", /^text\/javascript/, "/v2alpha1/admin"],
    ["/portal/portal.css", /^text\/css/, "font-family"],
  ])("serves %s with a strict content security policy", async (url, type, snippet) => {
    const res = await t.request({ method: "GET", url });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(type);
    expect(res.body).toContain(snippet);
    expect(res.headers["content-security-policy"]).toContain("default-src 'none'");
    expect(res.headers["content-security-policy"]).toContain("script-src 'self'");
  });

  it("serves nothing else from its folder", async () => {
    expect((await t.request({ method: "GET", url: "/portal/routes.ts" })).statusCode).toBe(404);
    expect((await t.request({ method: "GET", url: "/portal/..%2Fapp.ts" })).statusCode).toBe(404);
  });
});
