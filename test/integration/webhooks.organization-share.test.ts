import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type WebhooksApp } from "../helpers/app.js";
import { USER_SCHEMA } from "../helpers/constants.js";
import { type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";

// One organization's endpoint takes every request and never answers; another organization's deliveries must not
// wait behind it. Four slots: an organization's share is two.
const SECRET = "whsec_share_0123456789abcdef";
let t: WebhooksApp;
let blackHole: Server;
let blackHoleUrl = "";
let open = 0;
let mostOpen = 0;
let receiver: WebhookReceiver;
let stuck: SeededClient;
let prompt: SeededClient;

beforeAll(async () => {
  blackHole = createServer((req) => {
    open++;
    mostOpen = Math.max(mostOpen, open);
    req.resume();
    req.socket.once("close", () => open--);
  });
  await new Promise<void>((resolve) => blackHole.listen(0, "127.0.0.1", resolve));
  blackHoleUrl = `http://127.0.0.1:${(blackHole.address() as AddressInfo).port}/hook`;
  receiver = await startWebhookReceiver();
  t = await createTestApp({ webhooks: { concurrency: 4, timeoutMs: 3_000, pollIntervalMs: 600_000 } });
  // Client ids in this order: the black-holed organization's resources come first in the dispatcher's key order.
  stuck = await seedClient(t, { client_id: "a-black-holed", webhook: { url: blackHoleUrl, secret: SECRET } });
  prompt = await seedClient(t, { client_id: "b-prompt", webhook: { url: receiver.url, secret: SECRET } });
});
afterAll(async () => {
  // The black hole goes first: the deliveries it holds then fail at once, and the dispatcher's stop, which waits for
  // its deliveries under way, does not wait out their timeout.
  const closed = new Promise((resolve) => blackHole.close(resolve));
  blackHole.closeAllConnections();
  await closed;
  await t.webhooks.dispatcher.stop();
  await t.close();
  await receiver.close();
});

const createUsers = async (c: SeededClient, n: number) => {
  for (let i = 0; i < n; i++) {
    const res = await scim(t, c, "POST", "/Users", {
      schemas: [USER_SCHEMA],
      userName: `${c.clientId}-${i}@example.com`,
    });
    expect(res.statusCode, res.body).toBe(201);
  }
};

describe("webhook delivery slots are shared between organizations", () => {
  it("a black-holed endpoint holds at most its organization's share; another organization is delivered at once", async () => {
    await createUsers(stuck, 8);
    await createUsers(prompt, 2);
    const started = performance.now();
    t.webhooks.dispatcher.start();
    await receiver.waitFor(2, 10_000);
    const elapsed = performance.now() - started;
    console.log(`organization share: the other organization's 2 events in ${elapsed.toFixed(0)} ms`);
    // Without shares the four slots all wait on the black hole until the 3 s timeout.
    expect(elapsed).toBeLessThan(2_000);
    expect(receiver.received.map((r) => r.json.event)).toEqual(["user.created", "user.created"]);
    expect(mostOpen).toBeGreaterThan(0);
    expect(mostOpen).toBeLessThanOrEqual(2);
  });
});
