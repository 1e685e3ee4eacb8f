import { Webhook } from "standardwebhooks";
import { beforeEach, describe, expect, it } from "vitest";
import { adminCall, type SeededClient, scim } from "../helpers/seed.js";
import type { ReceivedWebhook } from "../helpers/webhook-receiver.js";
import { useTestApp } from "../helpers/suite.js";
import { USER_SCHEMA } from "../helpers/constants.js";

const { t: e } = useTestApp({ receiver: true });
beforeEach(() => e.receiver.reset());

const headersOf = (r: ReceivedWebhook): Record<string, string> =>
  Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]));

async function deliveryWith(secret: string): Promise<{ c: SeededClient; r: ReceivedWebhook }> {
  const c = await e.seed({ webhook: { url: e.receiver.url, secret } });
  const res = await scim(e, c, "POST", "/Users", {
    schemas: [USER_SCHEMA],
    userName: `std-${c.clientId}@example.com`,
  });
  expect(res.statusCode).toBe(201);
  await e.webhooks.dispatcher.drain();
  const r = e.receiver.received.at(-1);
  if (r === undefined) throw new Error("nothing delivered");
  return { c, r };
}

describe("Standard Webhooks headers, verified by the standardwebhooks package", () => {
  it("a whsec_ secret (from :generateWebhookSecret): the base64-decoded rest is the key", async () => {
    const c = await e.seed();
    const generated = await adminCall(e, "POST", `/scimClients/${c.clientId}:generateWebhookSecret`);
    expect(generated.statusCode).toBe(200);
    const secret = generated.json().secret as string;
    const { r } = await deliveryWith(secret);
    const payload = new Webhook(secret).verify(r.rawBody, headersOf(r)) as Record<string, unknown>;
    expect(payload.id).toBe(r.headers["webhook-id"]);
    expect(payload.event).toBe("user.created");
    // The same instant as Service-Signature's t (milliseconds), in seconds.
    const t = /t=(\d+)/.exec(String(r.headers["service-signature"]))?.[1];
    expect(r.headers["webhook-timestamp"]).toBe(String(Math.floor(Number(t) / 1000)));
  });

  it("any other secret: its UTF-8 bytes are the key", async () => {
    const secret = "a-plain-webhook-secret-0123456789-é";
    const { r } = await deliveryWith(secret);
    expect(
      new Webhook(new TextEncoder().encode(secret), { format: "raw" }).verify(r.rawBody, headersOf(r)),
    ).toMatchObject({
      event: "user.created",
    });
    // The package reads a raw string as Latin-1: pass the UTF-8 bytes, as above, when the secret is not ASCII.
    expect(() => new Webhook(secret, { format: "raw" }).verify(r.rawBody, headersOf(r))).toThrow();
  });

  it("a changed body, id or timestamp does not verify", async () => {
    const secret = "a-plain-webhook-secret-abcdef";
    const { r } = await deliveryWith(secret);
    const hook = new Webhook(secret, { format: "raw" });
    const tampered = Buffer.from(r.rawBody.toString("utf8").replace("user.created", "user.deleted"));
    expect(() => hook.verify(tampered, headersOf(r))).toThrow();
    expect(() => hook.verify(r.rawBody, { ...headersOf(r), "webhook-id": "another" })).toThrow();
    const ts = Number(r.headers["webhook-timestamp"]) + 1;
    expect(() => hook.verify(r.rawBody, { ...headersOf(r), "webhook-timestamp": String(ts) })).toThrow();
  });
});

describe(":generateWebhookSecret", () => {
  it("returns a fresh whsec_ secret of 32 random bytes each time and stores nothing", async () => {
    const c = await e.seed();
    const before = (await adminCall(e, "GET", `/scimClients/${c.clientId}`)).json();
    const secrets = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const res = await adminCall(e, "POST", `/scimClients/${c.clientId}:generateWebhookSecret`);
      expect(res.statusCode).toBe(200);
      expect(res.headers["cache-control"]).toBe("no-store");
      const secret = res.json().secret as string;
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(32);
      secrets.add(secret);
    }
    expect(secrets.size).toBe(3);
    expect((await adminCall(e, "GET", `/scimClients/${c.clientId}`)).json()).toEqual(before);
  });

  it("answers 404 for an unknown client, 401 without the admin token", async () => {
    expect((await adminCall(e, "POST", "/scimClients/nope:generateWebhookSecret")).statusCode).toBe(404);
    const c = await e.seed();
    const anonymous = await e.request({
      method: "POST",
      url: `/v2alpha1/admin/scimClients/${c.clientId}:generateWebhookSecret`,
    });
    expect(anonymous.statusCode).toBe(401);
  });
});
