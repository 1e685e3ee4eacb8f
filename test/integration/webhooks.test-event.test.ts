import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { adminCall, adminHeaders, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";
import { type PlainReceiver, startPlainReceiver } from "../helpers/webhook-receiver.js";
import { adminError } from "../helpers/errors.js";

const SECRET = "whsec_dGVzdC1ldmVudC1zZWNyZXQtMDEyMzQ1Njc4OQ==";
/** Longer than the 4 KiB the event log keeps; ends in a marker that must not be kept. */
const LONG_ANSWER = `${"é".repeat(2100)}END-OF-ANSWER`;

// A long poll interval: only the route's wake-up can make the running dispatcher deliver promptly.
const { t: w, receiver } = useTestApp({ webhooks: { pollIntervalMs: 600_000 }, hooks: true });
let verbose: PlainReceiver;
let verboseUrl: string;
let trickle: Server;
let trickleUrl: string;

beforeAll(async () => {
  // A receiver whose answer is larger than what the event log keeps.
  verbose = await startPlainReceiver(() => ({
    status: 200,
    headers: { "content-type": "text/plain; charset=utf-8" },
    body: LONG_ANSWER,
  }));
  verboseUrl = verbose.url;
  // A receiver that answers its headers at once, then a byte and nothing more: the body never ends.
  trickle = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("x");
    });
  });
  await new Promise<void>((resolve) => trickle.listen(0, "127.0.0.1", resolve));
  trickleUrl = `http://127.0.0.1:${(trickle.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  await w.webhooks.dispatcher.stop();
  await verbose.close();
  trickle.closeAllConnections();
  await new Promise((resolve) => trickle.close(resolve));
});
beforeEach(() => receiver.reset());

const hooked = (webhook: Record<string, unknown> = {}) =>
  seedClient(w, { webhook: { url: receiver.url, secret: SECRET, ...webhook }, log_webhook_events: true });
const sendTestEvent = (clientId: string) => adminCall(w, "POST", `/scimClients/${clientId}:sendTestEvent`);
const logged = async (c: SeededClient) => {
  const res = await adminCall(w, "GET", `/scimClients/${c.clientId}/webhookEvents?event=webhook.test`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().webhook_events as Record<string, unknown>[];
};

describe("POST /scimClients/{id}:sendTestEvent", () => {
  it("answers 202 with the event id, and the running dispatcher delivers it at once, signed", async () => {
    const c = await hooked();
    w.webhooks.dispatcher.start();
    try {
      const res = await sendTestEvent(c.clientId);
      expect(res.statusCode, res.body).toBe(202);
      const { event_id, event } = res.json() as { event_id: string; event: string };
      expect(event).toBe("webhook.test");
      expect(event_id).toMatch(/^[0-9a-f-]{36}$/);
      await receiver.waitFor(1, 5000);
      const r = receiver.received[0];
      if (r === undefined) throw new Error("nothing delivered");
      const headers = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]));
      expect(headers["webhook-id"]).toBe(event_id);
      const body = new Webhook(SECRET).verify(r.rawBody.toString("utf8"), headers);
      expect(body).toMatchObject({
        directory_id: c.clientId,
        event: "webhook.test",
        id: event_id,
        data: { test: true, directory_id: c.clientId, organization_id: c.organizationId },
      });
    } finally {
      await w.webhooks.dispatcher.stop();
    }
  });

  it("records the attempt with the signed headers sent and the receiver's answer", async () => {
    const c = await hooked();
    const eventId = (await sendTestEvent(c.clientId)).json().event_id as string;
    await w.webhooks.dispatcher.drain();
    const r = receiver.received.at(-1);
    expect(r?.headers["webhook-id"]).toBe(eventId);
    const [entry, ...rest] = await logged(c);
    expect(rest).toHaveLength(0);
    expect(entry).toMatchObject({
      event_id: eventId,
      event: "webhook.test",
      success: true,
      status_code: 200,
      state: "delivered",
      response_body: "ok",
      response_body_truncated: false,
      request_headers: {
        "content-type": "application/json",
        "webhook-id": eventId,
        "webhook-timestamp": r?.headers["webhook-timestamp"],
        "webhook-signature": r?.headers["webhook-signature"],
      },
    });
    const all = await adminCall(w, "GET", `/scimClients/${c.clientId}/webhookEvents`);
    expect(all.body).not.toContain(SECRET);
    expect(all.body).not.toContain(SECRET.slice("whsec_".length));
  });

  it("keeps the first 4 KiB of a longer answer and says it was cut", async () => {
    const c = await seedClient(w, { webhook: { url: verboseUrl, secret: SECRET }, log_webhook_events: true });
    expect((await sendTestEvent(c.clientId)).statusCode).toBe(202);
    await w.webhooks.dispatcher.drain();
    const [entry] = await logged(c);
    expect(entry?.response_body_truncated).toBe(true);
    const kept = String(entry?.response_body);
    // 2 bytes a character: 2048 of them fill the 4 096 bytes exactly; nothing after the cut is kept.
    expect(Buffer.byteLength(kept)).toBe(4096);
    expect(kept).toBe("é".repeat(2048));
    expect(kept).not.toContain("END-OF-ANSWER");
  });

  it("does not wait past the delivery timeout for an answer whose body never ends", async () => {
    const c = await seedClient(w, { webhook: { url: trickleUrl, secret: SECRET }, log_webhook_events: true });
    expect((await sendTestEvent(c.clientId)).statusCode).toBe(202);
    await w.webhooks.dispatcher.drain();
    const [entry] = await logged(c);
    // The test dispatcher's timeout is 2 000 ms (helpers/webhooks.ts).
    expect(entry).toMatchObject({ success: false, error: "timeout after 2000 ms", response_body: null });
    expect(Number(entry?.duration_ms)).toBeLessThan(4000);
  });

  it("is retried per the connection's retry setting", async () => {
    const c = await hooked({ retry: "backoff" });
    receiver.answer(503);
    try {
      expect((await sendTestEvent(c.clientId)).statusCode).toBe(202);
      await w.webhooks.dispatcher.drain();
    } finally {
      receiver.answer(200);
    }
    const [entry] = await logged(c);
    expect(entry).toMatchObject({ success: false, status_code: 503, state: "retrying", response_body: "ok" });
    expect(entry?.next_attempt_time).not.toBeNull();
  });

  it("is not a directory event: the events feed does not have it", async () => {
    const c = await hooked();
    const eventId = (await sendTestEvent(c.clientId)).json().event_id as string;
    const created = await scim(w, c, "POST", "/Users", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      userName: `feed-${c.clientId}@example.com`,
    });
    expect(created.statusCode).toBe(201);
    await w.webhooks.dispatcher.drain();
    const hooks = receiver.received.map((r) => r.json.event);
    expect(hooks).toEqual(expect.arrayContaining(["webhook.test", "user.created"]));
    const userEventId = receiver.received.find((r) => r.json.event === "user.created")?.json.id;
    expect((await adminCall(w, "GET", `/events/${String(userEventId)}`)).statusCode).toBe(200);
    expect((await adminCall(w, "GET", `/events/${eventId}`)).statusCode).toBe(404);
  });

  it("writes the audit trail", async () => {
    const c = await hooked();
    expect((await sendTestEvent(c.clientId)).statusCode).toBe(202);
    await w.webhooks.dispatcher.drain();
    const target = encodeURIComponent(`scimClients/${c.clientId}`);
    const entries = (await adminCall(w, "GET", `/auditLog?target=${target}`)).json().entries as {
      action: string;
      status: number;
    }[];
    expect(entries[0]).toMatchObject({ action: "scimClients.sendTestEvent", status: 202 });
  });

  it("is 412 FAILED_PRECONDITION without a webhook URL, and queues nothing", async () => {
    const c = await seedClient(w, { log_webhook_events: true });
    const res = await sendTestEvent(c.clientId);
    expect(res.statusCode).toBe(412);
    expect(res.json()).toEqual(adminError(412, "FAILED_PRECONDITION", "the SCIM client has no webhook URL configured"));
    expect(await w.webhooks.dispatcher.drain()).toBe(0);
    expect(await logged(c)).toEqual([]);
  });

  it("is 404 for an unknown client", async () => {
    const res = await sendTestEvent("no-such-client");
    expect(res.statusCode).toBe(404);
    expect(res.json().error.status).toBe("NOT_FOUND");
  });

  it("is refused to a viewer admin token (it is a write)", async () => {
    const c = await hooked();
    // The connection's own connection.created, before the refused call is shown to queue nothing.
    expect(await w.webhooks.dispatcher.drain()).toBe(1);
    const created = await adminCall(w, "POST", "/adminTokens", { name: "read-only", role: "viewer" });
    expect(created.statusCode, created.body).toBe(201);
    const res = await w.request({
      method: "POST",
      url: `/v2alpha1/admin/scimClients/${c.clientId}:sendTestEvent`,
      headers: { authorization: `Bearer ${created.json().token as string}` },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.status).toBe("PERMISSION_DENIED");
    expect(await w.webhooks.dispatcher.drain()).toBe(0);
    // The same call with an admin token goes through.
    expect(
      (
        await w.request({
          method: "POST",
          url: `/v2alpha1/admin/scimClients/${c.clientId}:sendTestEvent`,
          headers: adminHeaders,
        })
      ).statusCode,
    ).toBe(202);
  });
});
