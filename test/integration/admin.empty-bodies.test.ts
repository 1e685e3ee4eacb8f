import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN } from "../helpers/constants.js";
import { seedClient } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

// Many HTTP clients send `content-type: application/json` with every call, bodies or not. A call that takes no body
// (or an optional one) must not fail on the header: an empty body is no body. A call that needs one still says so.

const { t } = useTestApp();

/** A call with the JSON content type and exactly `body` (often nothing) as its payload. */
const send = (method: "POST" | "DELETE", path: string, body = "") =>
  t.request({
    method,
    url: `/v2alpha1/admin${path}`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    payload: body,
  });

describe("an empty body with content-type: application/json", () => {
  it("DELETE of a connection succeeds", async () => {
    const c = await seedClient(t);
    const res = await send("DELETE", `/scimClients/${c.clientId}`);
    expect(res.statusCode, res.body).toBeLessThan(300);
    expect(
      (await t.request({ method: "GET", url: `/v2alpha1/admin/scimClients/${c.clientId}`, headers: auth })).statusCode,
    ).toBe(404);
  });

  it(":generateWebhookSecret answers a whsec_ secret", async () => {
    const c = await seedClient(t);
    const res = await send("POST", `/scimClients/${c.clientId}:generateWebhookSecret`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().secret).toMatch(/^whsec_/);
  });

  it(":rotateSecret (optional body) rotates", async () => {
    const c = await seedClient(t);
    const res = await send("POST", `/scimClients/${c.clientId}:rotateSecret`, " \n");
    expect(res.statusCode, res.body).toBe(200);
    expect(typeof res.json().secret).toBe("string");
  });

  it("a create, which needs a body, answers 400 'request body is empty'", async () => {
    const res = await send("POST", "/organizations");
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ status: "INVALID_ARGUMENT", message: "request body is empty" });
  });

  it("a body that is not JSON is still refused as such", async () => {
    const res = await send("POST", "/organizations", "{");
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toBe("request body is not valid JSON");
  });
});

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
