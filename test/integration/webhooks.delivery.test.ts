import { createServer } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { groupEventData, membershipEventData, userEventData, type DirectoryEvent } from "../../src/directory/events.js";
import { isUuid } from "../../src/platform/ids.js";
import { verifyWebhookSignature } from "../../src/webhooks/verify.js";
import { adminCall, type SeededClient, seedClient } from "../helpers/seed.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";
import { loadClient, outboxCount, recordEvents, testWebhooks } from "../helpers/webhooks.js";
import { createTestApp, type WebhooksApp } from "../helpers/app.js";
import { GROUP_SCHEMA, USER_SCHEMA } from "../helpers/constants.js";

const WEBHOOK_SECRET = "whsec_delivery_test_secret";
let w: WebhooksApp;
let receiver: WebhookReceiver;
let c: SeededClient;

const USER = {
  schemas: [USER_SCHEMA],
  id: "0197a000-0000-7000-8000-000000000001",
  userName: "ada@example.com",
  name: { givenName: "Ada", familyName: "Lovelace" },
  emails: [
    { value: "ada@work.example.com", type: "work", primary: true },
    { value: "ada@home.example.com", type: "home" },
  ],
  active: true,
  password: "must-never-leave",
};
const GROUP = {
  schemas: [GROUP_SCHEMA],
  id: "0197a000-0000-7000-8000-0000000000aa",
  displayName: "Engineering",
  members: [{ value: USER.id }],
};

const allKinds = (): DirectoryEvent[] => [
  { kind: "user.created", resourceId: USER.id, data: userEventData(USER) },
  { kind: "user.updated", resourceId: USER.id, data: userEventData({ ...USER, active: false }) },
  { kind: "group.created", resourceId: GROUP.id, data: groupEventData(GROUP) },
  { kind: "group.user_added", resourceId: GROUP.id, data: membershipEventData(USER, GROUP) },
  { kind: "group.updated", resourceId: GROUP.id, data: groupEventData({ ...GROUP, displayName: "Eng" }) },
  { kind: "group.user_removed", resourceId: GROUP.id, data: membershipEventData(USER, GROUP) },
  { kind: "group.deleted", resourceId: GROUP.id, data: groupEventData(GROUP) },
  { kind: "user.deleted", resourceId: USER.id, data: userEventData(USER) },
];

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  w = await createTestApp({ webhooks: true });
  c = await seedClient(w, {
    tenant: "acme",
    product: "crm",
    webhook: { url: receiver.url, secret: WEBHOOK_SECRET },
    log_webhook_events: true,
  });
  // The connection's own connection.created goes first; the tests count the directory events they record.
  expect(await w.webhooks.dispatcher.drain()).toBe(1);
});
afterAll(async () => {
  await w.close();
  await receiver.close();
});
beforeEach(() => receiver.reset());

const record = (events: DirectoryEvent[], clientId = c.clientId) => recordEvents(w.db, w.webhooks, clientId, events);

describe("delivery", () => {
  it("POSTs every event kind with the documented body", async () => {
    await record(allKinds());
    expect(await w.webhooks.dispatcher.drain()).toBe(8);
    expect(receiver.received.map((r) => r.json.event).sort()).toEqual(
      allKinds()
        .map((e) => e.kind)
        .sort(),
    );
    const byKind = new Map(receiver.received.map((r) => [r.json.event, r]));

    const created = byKind.get("user.created");
    expect(created?.method).toBe("POST");
    expect(created?.path).toBe("/hook");
    expect(created?.headers["content-type"]).toBe("application/json");
    // Exactly the documented fields, in their order (docs/webhooks.md).
    expect(Object.keys(created?.json ?? {})).toEqual([
      "directory_id",
      "event",
      "tenant",
      "product",
      "data",
      "id",
      "created_at",
    ]);
    const { password: _pw, ...rawUser } = USER;
    // The event's identity: the webhook-id header and the time of the change.
    expect(created?.json.id).toBe(created?.headers["webhook-id"]);
    expect(created?.json.created_at).toBe(w.clock.now().toISOString());
    expect(created?.json).toEqual({
      id: created?.headers["webhook-id"],
      created_at: w.clock.now().toISOString(),
      directory_id: c.clientId,
      event: "user.created",
      tenant: "acme",
      product: "crm",
      data: {
        id: USER.id,
        first_name: "Ada",
        last_name: "Lovelace",
        email: "ada@work.example.com",
        active: true,
        raw: rawUser,
      },
    });
    expect(created?.rawBody.toString()).not.toContain("must-never-leave");
    expect(byKind.get("user.updated")?.json.data).toMatchObject({ active: false });
    expect(byKind.get("group.created")?.json.data).toEqual({ id: GROUP.id, name: "Engineering", raw: GROUP });
    expect(byKind.get("group.user_added")?.json.data).toEqual({
      ...userEventData(USER),
      group: { id: GROUP.id, name: "Engineering", raw: GROUP },
    });
    expect(byKind.get("group.user_removed")?.json.data).toMatchObject({ email: "ada@work.example.com" });
  });

  it("signs the raw bytes it sends: verifyWebhookSignature accepts them with the test clock", async () => {
    await record(allKinds());
    await w.webhooks.dispatcher.drain();
    expect(receiver.received).toHaveLength(8);
    for (const r of receiver.received) {
      const header = r.headers["service-signature"];
      expect(header).toMatch(/^t=\d{13},s=[0-9a-f]{64}$/);
      expect(header).toContain(`t=${w.clock.now().getTime()},`);
      expect(verifyWebhookSignature(WEBHOOK_SECRET, String(header), r.rawBody, { now: w.clock.now() })).toBe(true);
      expect(verifyWebhookSignature("wrong", String(header), r.rawBody, { now: w.clock.now() })).toBe(false);
    }
  });

  it("gives every event its own webhook-id", async () => {
    await record(allKinds());
    await record(allKinds());
    await w.webhooks.dispatcher.drain();
    const ids = receiver.received.map((r) => String(r.headers["webhook-id"]));
    expect(ids).toHaveLength(16);
    expect(ids.every(isUuid)).toBe(true);
    expect(new Set(ids).size).toBe(16);
  });

  it("snapshots tenant and product when the change is recorded", async () => {
    await record(allKinds().slice(0, 1));
    await adminCall(w, "PATCH", `/scimClients/${c.clientId}?update_mask=tenant`, { tenant: "renamed" });
    await w.webhooks.dispatcher.drain();
    expect(receiver.received[0]?.json.tenant).toBe("acme");
    await adminCall(w, "PATCH", `/scimClients/${c.clientId}?update_mask=tenant`, { tenant: "acme" });
  });

  it("records nothing for a rolled-back transaction", async () => {
    const client = await loadClient(w.db, c.clientId);
    await expect(
      w.db.transaction().execute(async (trx) => {
        await w.webhooks.sink.record(trx, client, allKinds());
        throw new Error("the change failed");
      }),
    ).rejects.toThrow("the change failed");
    expect(await outboxCount(w.db)).toBe(0);
    expect(await w.webhooks.dispatcher.drain()).toBe(0);
    expect(receiver.received).toHaveLength(0);
  });

  it("records nothing for an empty event list or a client without a webhook URL", async () => {
    await record([]);
    const plain = await seedClient(w);
    await record(allKinds(), plain.clientId);
    expect(await outboxCount(w.db)).toBe(0);
  });
});

describe("failures are not retried", () => {
  const lastAttempt = async () =>
    (await adminCall(w, "GET", `/scimClients/${c.clientId}/webhookEvents?page_size=1`)).json().webhook_events[0];

  it("sends once after a 500 and drops the event", async () => {
    receiver.answer(500);
    await record(allKinds().slice(0, 1));
    expect(await w.webhooks.dispatcher.drain()).toBe(1);
    expect(await w.webhooks.dispatcher.drain()).toBe(0);
    expect(receiver.received).toHaveLength(1);
    expect(await outboxCount(w.db)).toBe(0);
    expect(await lastAttempt()).toMatchObject({ success: false, status_code: 500, error: "HTTP 500" });
  });

  it("treats a redirect as a failure and does not follow it", async () => {
    receiver.answer(302);
    await record(allKinds().slice(0, 1));
    await w.webhooks.dispatcher.drain();
    expect(receiver.received).toHaveLength(1);
    expect(await lastAttempt()).toMatchObject({ success: false, status_code: 302 });
  });

  it("sends once after a timeout (ROSTER_WEBHOOK_TIMEOUT_MS)", async () => {
    receiver.answer("hang");
    const quick = testWebhooks(w.db, w.clock, { timeoutMs: 300 });
    await record(allKinds().slice(0, 1));
    expect(await quick.dispatcher.drain()).toBe(1);
    expect(await quick.dispatcher.drain()).toBe(0);
    expect(receiver.received).toHaveLength(1);
    expect(await lastAttempt()).toMatchObject({ success: false, status_code: null, error: "timeout after 300 ms" });
  });

  it("sends once after a refused connection", async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const port = (s.address() as { port: number }).port;
        s.close(() => resolve(port));
      });
    });
    await adminCall(w, "PATCH", `/scimClients/${c.clientId}?update_mask=webhook.url`, {
      webhook: { url: `http://127.0.0.1:${closedPort}/hook` },
    });
    try {
      await record(allKinds().slice(0, 1));
      expect(await w.webhooks.dispatcher.drain()).toBe(1);
      expect(await w.webhooks.dispatcher.drain()).toBe(0);
      expect(await outboxCount(w.db)).toBe(0);
      const attempt = await lastAttempt();
      expect(attempt).toMatchObject({ success: false, status_code: null });
      expect(attempt.error).toMatch(/^connection error: ECONNREFUSED/);
    } finally {
      await adminCall(w, "PATCH", `/scimClients/${c.clientId}?update_mask=webhook.url`, {
        webhook: { url: receiver.url },
      });
    }
  });

  it("does not send unsigned when no webhook secret is set", async () => {
    const unsigned = await seedClient(w, { webhook: { url: receiver.url }, log_webhook_events: true });
    // Its connection.created is not sent unsigned either.
    expect(await w.webhooks.dispatcher.drain()).toBe(1);
    await record(allKinds().slice(0, 1), unsigned.clientId);
    expect(await w.webhooks.dispatcher.drain()).toBe(1);
    expect(receiver.received).toHaveLength(0);
    const res = await adminCall(w, "GET", `/scimClients/${unsigned.clientId}/webhookEvents`);
    expect(res.json().webhook_events[0]).toMatchObject({ success: false, error: expect.stringMatching(/secret/) });
  });
});

describe("wiring", () => {
  it("a SCIM write wakes the running dispatcher; no poll interval needed", async () => {
    const slow = await createTestApp({ database: w.database, clock: w.clock, webhooks: { pollIntervalMs: 600_000 } });
    slow.webhooks.dispatcher.start();
    try {
      // Without the wake the dispatcher would sleep for the (long) poll interval after its first empty turn.
      const res = await slow.request({
        method: "POST",
        url: `${c.base}/Users`,
        headers: c.headers,
        payload: { schemas: [USER_SCHEMA], userName: "wake@example.com" },
      });
      expect(res.statusCode).toBe(201);
      await expect.poll(() => receiver.received.length, { timeout: 5000, interval: 10 }).toBe(1);
    } finally {
      await slow.webhooks.dispatcher.stop();
      await slow.close();
    }
  });
});
