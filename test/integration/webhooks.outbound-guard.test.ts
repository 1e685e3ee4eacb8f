import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestApp, type WebhooksApp } from "../helpers/app.js";
import { adminCall, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { type PlainReceiver, startPlainReceiver } from "../helpers/webhook-receiver.js";

// An internal service on loopback whose answer must never reach a webhook's event log unless an operator allowed
// loopback (ROSTER_WEBHOOK_URL_ALLOW); and a receiver that redirects there.
// Not secret-shaped (the event log redacts those anyway): the point here is who may read the answer at all.
const INTERNAL_ANSWER = "internal inventory service v3: 17 hosts";
const SECRET = "whsec_outbound_guard_0123456789";
let internal: PlainReceiver;
let internalHits = 0;
let port = 0;
let redirector: PlainReceiver;
let redirectorUrl = "";
/** The harness's allow list (loopback), so URLs of local servers can be stored and reached. */
let open: WebhooksApp;
/** The same database with the default: no allow list. */
let closed: WebhooksApp;
/** Only 127.0.0.1 listed. */
let listed: WebhooksApp;

beforeAll(async () => {
  internal = await startPlainReceiver(() => {
    internalHits++;
    return { status: 200, headers: { "content-type": "text/plain" }, body: INTERNAL_ANSWER };
  });
  port = internal.port;
  redirector = await startPlainReceiver(() => ({
    status: 302,
    headers: { location: `http://127.0.0.1:${port}/secret` },
  }));
  redirectorUrl = redirector.url;
  open = await createTestApp({ webhooks: { pollIntervalMs: 600_000 } });
  closed = await createTestApp({
    database: open.database,
    webhooks: { pollIntervalMs: 600_000, urlAllow: [] },
    extra: { webhookUrlAllow: [] },
  });
  listed = await createTestApp({
    database: open.database,
    webhooks: { pollIntervalMs: 600_000, urlAllow: ["127.0.0.1"] },
    extra: { webhookUrlAllow: ["127.0.0.1"] },
  });
});
afterAll(async () => {
  await listed.close();
  await closed.close();
  await open.close();
  await internal.close();
  await redirector.close();
});
beforeEach(() => {
  internalHits = 0;
});

const hooked = (t: WebhooksApp, url: string) =>
  seedClient(t, { webhook: { url, secret: SECRET }, log_webhook_events: true });
/** The client's event log, newest first; `query` narrows it (`?event=webhook.test`). */
const logged = async (t: WebhooksApp, c: SeededClient, headers?: Record<string, string>, query = "") => {
  const res = await t.request({
    method: "GET",
    url: `/v2alpha1/admin/scimClients/${c.clientId}/webhookEvents${query}`,
    headers: headers ?? { authorization: "Bearer test-admin-token-0123456789" },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().webhook_events as Record<string, unknown>[];
};

describe("webhook URLs toward internal addresses are refused when configured", () => {
  const refused = () => [
    ["loopback", `http://127.0.0.1:${port}/hook`],
    ["IPv6 loopback", `http://[::1]:${port}/hook`],
    ["the unspecified address", `http://0.0.0.0:${port}/hook`],
    ["loopback as one decimal number", `http://2130706433:${port}/hook`],
    ["loopback in hex", `http://0x7f000001:${port}/hook`],
    ["loopback in octal", `http://0177.0.0.1:${port}/hook`],
    ["loopback in short form", `http://127.1:${port}/hook`],
    ["IPv4-mapped IPv6 loopback", `http://[::ffff:127.0.0.1]:${port}/hook`],
    ["a private address", "http://10.0.0.1/hook"],
    ["the cloud metadata service", "http://169.254.169.254/latest/meta-data/"],
    ["a shared (CGNAT) address", "http://100.64.0.1/hook"],
    ["an IPv6 unique local address", "http://[fd00::1]/hook"],
    ["a multicast address", "http://224.0.0.1/hook"],
    ["a host name resolving to loopback", `http://localhost:${port}/hook`],
    ["Roster's own admin API", "http://roster.test/v2alpha1/admin/adminTokens"],
  ];

  it("on create: 400 naming the rule, and nothing stored", async () => {
    const org = (await adminCall(closed, "POST", "/organizations", { name: "Guarded" })).json().id as string;
    for (const [name, url] of refused()) {
      const res = await adminCall(closed, "POST", "/scimClients", {
        organization_id: org,
        webhook: { url, secret: SECRET },
      });
      expect(res.statusCode, `${name}: ${res.body}`).toBe(400);
      expect(res.json().error.message, name).toMatch(/^webhook\.url is refused: /);
    }
    const clients = await adminCall(closed, "GET", `/scimClients?organization_id=${org}`);
    expect(clients.json().scim_clients).toEqual([]);
  });

  it("on PATCH: 400, and the URL stays as it was", async () => {
    const c = await hooked(closed, "https://hooks.example.com/in");
    for (const [name, url] of refused()) {
      const res = await adminCall(closed, "PATCH", `/scimClients/${c.clientId}?update_mask=webhook.url`, {
        webhook: { url },
      });
      expect(res.statusCode, `${name}: ${res.body}`).toBe(400);
    }
    const whole = await adminCall(closed, "PATCH", `/scimClients/${c.clientId}`, {
      webhook: { url: `http://2130706433:${port}/`, secret: SECRET },
    });
    expect(whole.statusCode, whole.body).toBe(400);
    expect(whole.json().error.message).toMatch(/loopback address, not allowed unless ROSTER_WEBHOOK_URL_ALLOW/);
    const now = await adminCall(closed, "GET", `/scimClients/${c.clientId}`);
    expect(now.json().webhook.url).toBe("https://hooks.example.com/in");
  });

  it("a public host name passes (DNS that does not answer is left to the send-time check)", async () => {
    const c = await hooked(closed, "https://hooks.example.com/in");
    expect(c.clientId).not.toBe("");
  });
});

describe("a URL stored before (or resolving differently now) is refused when sent", () => {
  it(":sendTestEvent answers 412 FAILED_PRECONDITION and posts nothing", async () => {
    const c = await hooked(open, `http://127.0.0.1:${port}/hook`);
    const res = await adminCall(closed, "POST", `/scimClients/${c.clientId}:sendTestEvent`);
    expect(res.statusCode, res.body).toBe(412);
    expect(res.json().error.status).toBe("FAILED_PRECONDITION");
    expect(res.json().error.message).toMatch(/webhook URL is refused: .*loopback/);
    expect(internalHits).toBe(0);
  });

  it.each([
    ["an IP literal", () => `http://2130706433:${port}/hook`],
    ["a host name resolving to loopback", () => `http://localhost:${port}/hook`],
  ])("a delivery to %s fails as refused, and a resend too", async (_name, url) => {
    const c = await hooked(open, url());
    const created = await scim(closed, c, "POST", "/Users", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      userName: `guard-${Math.random()}@example.com`,
    });
    expect(created.statusCode, created.body).toBe(201);
    await closed.webhooks.dispatcher.drain();
    const [attempt] = await logged(closed, c);
    expect(attempt).toMatchObject({ success: false, status_code: null, response_body: null });
    expect(String(attempt?.error)).toMatch(/^refused: .*loopback address/);
    const resent = await adminCall(
      closed,
      "POST",
      `/scimClients/${c.clientId}/webhookEvents/${attempt?.event_id}:resend`,
    );
    expect(resent.statusCode, resent.body).toBe(200);
    expect(resent.json()).toMatchObject({ success: false, status_code: null });
    expect(resent.json().error).toMatch(/^refused: /);
    expect(internalHits).toBe(0);
  });

  it("a redirect is never followed, even toward an allowed address", async () => {
    const c = await hooked(open, redirectorUrl);
    const sent = await adminCall(open, "POST", `/scimClients/${c.clientId}:sendTestEvent`);
    expect(sent.statusCode, sent.body).toBe(202);
    await open.webhooks.dispatcher.drain();
    const [attempt] = await logged(open, c);
    expect(attempt).toMatchObject({ success: false, status_code: 302, error: "HTTP 302" });
    expect(internalHits).toBe(0);
  });
});

describe("ROSTER_WEBHOOK_URL_ALLOW", () => {
  it("lets a listed address through, and only that one", async () => {
    const c = await hooked(listed, `http://127.0.0.1:${port}/hook`);
    const sent = await adminCall(listed, "POST", `/scimClients/${c.clientId}:sendTestEvent`);
    expect(sent.statusCode, sent.body).toBe(202);
    await listed.webhooks.dispatcher.drain();
    // The connection's own connection.created, then the test event.
    expect(internalHits).toBe(2);
    const attempts = await logged(listed, c);
    expect(attempts.map((a) => a.event).sort()).toEqual(["connection.created", "webhook.test"]);
    for (const attempt of attempts) {
      expect(attempt).toMatchObject({ success: true, status_code: 200, response_body: INTERNAL_ANSWER });
    }
    for (const url of [`http://[::1]:${port}/hook`, "http://10.0.0.1/hook", `http://127.0.0.2:${port}/hook`]) {
      const res = await adminCall(listed, "PATCH", `/scimClients/${c.clientId}?update_mask=webhook.url`, {
        webhook: { url },
      });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(400);
    }
  });
});

describe("the receiver's answer in the event log", () => {
  it("is shown to admin tokens only, not to viewers", async () => {
    const c = await hooked(listed, `http://127.0.0.1:${port}/hook`);
    await adminCall(listed, "POST", `/scimClients/${c.clientId}:sendTestEvent`);
    await listed.webhooks.dispatcher.drain();
    const viewer = await adminCall(listed, "POST", "/adminTokens", { name: "auditor", role: "viewer" });
    expect(viewer.statusCode, viewer.body).toBe(201);
    const asViewer = await logged(listed, c, { authorization: `Bearer ${viewer.json().token}` }, "?event=webhook.test");
    expect(asViewer).toHaveLength(1);
    expect(asViewer[0]).toMatchObject({ success: true, status_code: 200, response_body: null });
    expect(JSON.stringify(asViewer)).not.toContain("inventory");
    const asAdmin = await logged(listed, c, undefined, "?event=webhook.test");
    expect(asAdmin[0]).toMatchObject({ response_body: INTERNAL_ANSWER });
  });
});
