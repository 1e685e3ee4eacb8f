import { expect, it } from "vitest";
import { createIssuedKey, verifyKey } from "../helpers/api-keys.js";
import { useTestApp } from "../helpers/suite.js";
import { activated, adminCall, scim, seedClient } from "../helpers/seed.js";
import { PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";

const pool = { totalCount: 7, idleCount: 5, waitingCount: 1 };

const o = useTestApp({ observed: { pools: { main: pool } }, hooks: true });
const { receiver } = o;

async function scrape(): Promise<string> {
  const res = await o.t.request({ method: "GET", url: "/metrics" });
  expect(res.statusCode).toBe(200);
  expect(res.headers["content-type"]).toContain("text/plain");
  return res.body;
}

/** The value of one series, 0 when absent. */
function value(body: string, series: string): number {
  const line = body.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

it("counts SCIM requests and their latency per operation and status class, never per client or path", async () => {
  const c = await seedClient(o.t);
  const before = await scrape();
  const created = await scim(o.t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "m1@example.com" });
  expect(created.statusCode).toBe(201);
  await scim(o.t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "m1@example.com" });
  await scim(o.t, c, "GET", `/Users/${created.json().id}`);
  await scim(o.t, c, "GET", "/Users?count=1");
  await scim(o.t, c, "PATCH", `/Users/${created.json().id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: "replace", path: "active", value: false }],
  });
  await scim(o.t, c, "GET", "/Schemas");
  const after = await scrape();
  const delta = (series: string) => value(after, series) - value(before, series);
  expect(delta('roster_scim_requests_total{operation="users.create",status_class="2xx"}')).toBe(1);
  expect(delta('roster_scim_requests_total{operation="users.create",status_class="4xx"}')).toBe(1);
  expect(delta('roster_scim_requests_total{operation="users.get",status_class="2xx"}')).toBe(1);
  expect(delta('roster_scim_requests_total{operation="users.list",status_class="2xx"}')).toBe(1);
  expect(delta('roster_scim_requests_total{operation="users.patch",status_class="2xx"}')).toBe(1);
  expect(delta('roster_scim_requests_total{operation="discovery.schemas",status_class="2xx"}')).toBe(1);
  expect(delta('roster_scim_request_duration_seconds_count{operation="users.create"}')).toBe(2);
  expect(value(after, 'roster_scim_request_duration_seconds_bucket{le="+Inf",operation="users.create"}')).toBe(
    value(after, 'roster_scim_request_duration_seconds_count{operation="users.create"}'),
  );
  expect(after).not.toContain(c.clientId);
  expect(after).not.toContain(created.json().id);
});

it("counts admin requests per operation", async () => {
  const before = await scrape();
  await adminCall(o.t, "GET", "/organizations");
  await adminCall(o.t, "GET", "/scimClients/missing-client");
  const after = await scrape();
  const delta = (series: string) => value(after, series) - value(before, series);
  expect(delta('roster_admin_requests_total{operation="organizations.list",status_class="2xx"}')).toBe(1);
  expect(delta('roster_admin_requests_total{operation="scimClients.get",status_class="4xx"}')).toBe(1);
});

it("reports webhook deliveries by outcome, and the outbox backlog and its oldest event's age", async () => {
  const c = await seedClient(o.t, { webhook: { url: receiver.url, secret: "whsec_metrics_0123456789" } });
  await scim(o.t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "hooked@example.com" });
  await activated(o.t, c);
  o.t.clock.advance(30_000);
  const queued = await scrape();
  expect(value(queued, "roster_webhook_outbox_backlog")).toBeGreaterThanOrEqual(1);
  expect(value(queued, "roster_webhook_outbox_oldest_age_seconds")).toBeGreaterThanOrEqual(30);

  await o.webhooks.dispatcher.drain();
  receiver.answer(500);
  await scim(o.t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "refused@example.com" });
  await o.webhooks.dispatcher.runOnce();
  const after = await scrape();
  // The first user's user.created and the connection's own connection.created and connection.activated; then one refused.
  expect(value(after, 'roster_webhook_deliveries_total{outcome="success"}')).toBe(3);
  expect(value(after, 'roster_webhook_deliveries_total{outcome="failure"}')).toBe(1);
  expect(value(after, 'roster_webhook_delivery_duration_seconds_count{outcome="success"}')).toBe(3);
});

it("reports pool usage and API key rate-limit refusals", async () => {
  const key = await createIssuedKey(o.t, { rate_limits: [{ name: "m", limit: 1, period: "60s" }] });
  expect((await verifyKey(o.t, key.secret as string)).valid).toBe(true);
  expect((await verifyKey(o.t, key.secret as string)).valid).toBe(false);
  const body = await scrape();
  expect(value(body, "roster_api_key_rate_limited_total")).toBe(1);
  expect(value(body, 'roster_db_pool_connections{pool="main",state="total"}')).toBe(7);
  expect(value(body, 'roster_db_pool_connections{pool="main",state="idle"}')).toBe(5);
  expect(value(body, 'roster_db_pool_connections{pool="main",state="waiting"}')).toBe(1);
  expect(value(body, "roster_request_log_dropped_total")).toBe(0);
});
