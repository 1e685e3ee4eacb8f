import type { HTTPMethods } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIssuedKey } from "../helpers/api-keys.js";
import { ADMIN_PREFIX, type AdminRoute, recordAdminRoutes } from "../helpers/admin-routes.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { adminCall } from "../helpers/seed.js";
import { adminError } from "../helpers/errors.js";

const SOME_ID = "0197c3a2-5d1e-7c4b-9a7e-3f1d2c4b5a69";

/** Every admin route as the app registered it: one entry per method, in the order Fastify saw them. */
const routes: AdminRoute[] = [];

let t: TestApp;
let viewer: string;
beforeAll(async () => {
  t = await createTestApp({ extra: recordAdminRoutes(routes, { head: true }) });
  const created = await adminCall(t, "POST", "/adminTokens", { name: "dashboard", role: "viewer" });
  expect(created.statusCode, created.body).toBe(201);
  viewer = created.json().token;
});
afterAll(async () => t.close());

/** A concrete URL for a route pattern: escaped colons become colons, every parameter an id. */
function concrete(url: string): string {
  return url
    .replaceAll("::", "\u0000")
    .replace(/:\w+(\([^)]*\))?/g, SOME_ID)
    .replaceAll("\u0000", ":");
}

const asViewer = (method: string, url: string, payload?: unknown) =>
  t.request({
    method: method as HTTPMethods,
    url,
    headers: { authorization: `Bearer ${viewer}` },
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });

describe("the viewer role", () => {
  it("is refused with 403 PERMISSION_DENIED on every admin route that writes, enumerated from the app", async () => {
    const writes = routes.filter((r) => r.method !== "GET" && r.method !== "HEAD" && !r.viewerAllowed);
    // The admin API has organizations, SCIM clients, API keys, admin tokens, webhook events… writes.
    expect(writes.length).toBeGreaterThanOrEqual(15);
    expect(writes.map((r) => `${r.method} ${r.url}`)).toContain(`POST ${ADMIN_PREFIX}/adminTokens`);
    for (const route of writes) {
      const res = await asViewer(route.method, concrete(route.url), {});
      expect(res.statusCode, `${route.method} ${route.url}: ${res.body}`).toBe(403);
      expect(res.json()).toEqual(
        adminError(403, "PERMISSION_DENIED", "the viewer role may only read (GET) and verify API keys"),
      );
    }
  });

  it("changes nothing with a refused write", async () => {
    const before = (await adminCall(t, "GET", "/organizations")).json().organizations.length;
    expect((await asViewer("POST", `${ADMIN_PREFIX}/organizations`, { name: "Nope" })).statusCode).toBe(403);
    expect((await adminCall(t, "GET", "/organizations")).json().organizations.length).toBe(before);
  });

  it("may call every GET route, enumerated from the app", async () => {
    const reads = routes.filter((r) => r.method === "GET");
    expect(reads.length).toBeGreaterThanOrEqual(8);
    for (const route of reads) {
      const res = await asViewer("GET", concrete(route.url));
      expect([200, 400, 404], `GET ${route.url}: ${res.body}`).toContain(res.statusCode);
    }
    const orgs = await asViewer("GET", `${ADMIN_PREFIX}/organizations`);
    expect(orgs.statusCode).toBe(200);
  });

  it("may verify API keys (the only write-shaped route it may call)", async () => {
    expect(routes.filter((r) => r.viewerAllowed).map((r) => `${r.method} ${r.url}`)).toEqual([
      `POST ${ADMIN_PREFIX}/apiKeys::verify`,
    ]);
    const key = await createIssuedKey(t, { name: "for viewer" });
    const res = await asViewer("POST", `${ADMIN_PREFIX}/apiKeys:verify`, { key: key.secret });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ valid: true, key_id: key.key_id });
  });

  it("gets 404, not 403, for a route that does not exist", async () => {
    const res = await asViewer("POST", `${ADMIN_PREFIX}/nothingHere`, {});
    expect(res.statusCode).toBe(404);
  });
});
