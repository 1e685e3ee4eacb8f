import { readdirSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIST_DIR } from "../../src/portal/paths.js";
import { createTestApp, type TestApp } from "../helpers/app.js";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const built = (ext: string): string => {
  const name = readdirSync(`${DIST_DIR}/assets`).find((f) => f.startsWith("index-") && f.endsWith(ext));
  if (name === undefined) throw new Error(`no built index-*${ext} in ${DIST_DIR}`);
  return `/portal/assets/${name}`;
};

const strict = (csp: unknown) => {
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("style-src 'self'");
  expect(csp).not.toContain("unsafe-inline");
};

describe("admin portal assets", () => {
  it("redirects /portal to /portal/, keeping the query", async () => {
    const res = await t.request({ method: "GET", url: "/portal?x=1" });
    expect(res.statusCode).toBe(301);
    expect(res.headers.location).toBe("/portal/?x=1");
  });

  it.each(["/portal/", "/portal/organizations", "/portal/connections/abc/events", "/portal/api-keys/imported"])(
    "serves the page at %s (client-side routes: reloads and deep links work) with a strict CSP",
    async (url) => {
      const res = await t.request({ method: "GET", url });
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-type"]).toMatch(/^text\/html/);
      expect(res.body).toContain("<title>Roster admin portal</title>");
      expect(res.headers["cache-control"]).toBe("no-cache");
      strict(res.headers["content-security-policy"]);
    },
  );

  it("has no inline script or style in the page", async () => {
    const html = (await t.request({ method: "GET", url: "/portal/" })).body;
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=/);
  });

  it("serves the built script and stylesheet, cached for good under their content-hashed names", async () => {
    const js = await t.request({ method: "GET", url: built(".js") });
    expect(js.statusCode).toBe(200);
    expect(js.headers["content-type"]).toMatch(/^text\/javascript/);
    expect(js.body).toContain("/v2alpha1/admin");
    expect(js.headers["cache-control"]).toContain("immutable");
    const css = await t.request({ method: "GET", url: built(".css") });
    expect(css.headers["content-type"]).toMatch(/^text\/css/);
  });

  it("answers 404 for a file it does not have, and never serves anything outside its build", async () => {
    expect((await t.request({ method: "GET", url: "/portal/assets/missing.js" })).statusCode).toBe(404);
    expect((await t.request({ method: "GET", url: "/portal/routes.ts" })).statusCode).toBe(404);
    expect((await t.request({ method: "GET", url: "/portal/..%2Fapp.ts" })).statusCode).toBe(404);
    expect((await t.request({ method: "GET", url: "/portal/.source-hash" })).statusCode).toBe(404);
  });
});

describe("admin portal first load", () => {
  it("transfers less than 150 KB of gzipped JavaScript and CSS", async () => {
    const html = (await t.request({ method: "GET", url: "/portal/" })).body;
    const urls = [...html.matchAll(/(?:src|href)="(\/portal\/assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1] ?? "");
    expect(urls.length).toBeGreaterThanOrEqual(2);
    let total = 0;
    for (const url of urls)
      total += gzipSync((await t.request({ method: "GET", url })).rawPayload, { level: 9 }).length;
    expect(total).toBeLessThan(150 * 1024);
  });
});
