import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type WebhooksApp } from "../helpers/app.js";
import { USER_SCHEMA } from "../helpers/constants.js";
import { adminCall, scim, seedClient } from "../helpers/seed.js";
import { type PlainReceiver, startPlainReceiver } from "../helpers/webhook-receiver.js";

/**
 * The webhook event log is read by admins: what a receiver answers is kept without the secrets it may hold, the
 * headers kept are signatures only, and the payload of a user event never carries the password the IdP set.
 */
const SECRET = "whsec_event_log_redaction";
let w: WebhooksApp;
let server: PlainReceiver;
let url: string;
let answer = "";

beforeAll(async () => {
  server = await startPlainReceiver(() => ({ status: 500, headers: { "content-type": "text/plain" }, body: answer }));
  url = server.url;
  w = await createTestApp({ webhooks: true });
});
afterAll(async () => {
  await w.close();
  await server.close();
});

describe("the webhook event log holds no secret", () => {
  it.each([
    ["a config dump", "db_host=10.0.0.5\ndb_password=Db-Pw-Leak-1\nmode=prod", "Db-Pw-Leak-1", "db_host=10.0.0.5"],
    ["a JSON answer", '{"error":"denied","access_token":"Tok-Leak-2","hint":"x"}', "Tok-Leak-2", '"error":"denied"'],
    ["JSON with a secret in a string", '{"detail":"bad api_key=Key-Leak-3 given"}', "Key-Leak-3", "bad api_key="],
    ["a bearer credential", "upstream said: Authorization: Bearer Bearer-Leak-4", "Bearer-Leak-4", "upstream said"],
  ])("redacts %s in the stored response body", async (_what, body, secret, kept) => {
    answer = body;
    const c = await seedClient(w, { webhook: { url, secret: SECRET }, log_webhook_events: true });
    const created = await scim(w, c, "POST", "/Users", {
      schemas: [USER_SCHEMA],
      userName: `hook-${Math.random().toString(36).slice(2)}@example.com`,
      password: "Payload-Pw-5",
    });
    expect(created.statusCode, created.body).toBe(201);
    await w.webhooks.dispatcher.drain();
    const res = await adminCall(w, "GET", `/scimClients/${c.clientId}/webhookEvents`);
    expect(res.statusCode, res.body).toBe(200);
    const events = res.json().webhook_events as Array<Record<string, unknown>>;
    expect(events.length).toBeGreaterThan(0);
    expect(String(events[0]?.response_body)).toContain(kept);
    const stored = await w.db.selectFrom("webhook_events").selectAll().where("client_id", "=", c.clientId).execute();
    const everything = res.body + JSON.stringify(stored);
    for (const leak of [secret, "Payload-Pw-5", SECRET]) expect(everything).not.toContain(leak);
  });
});
