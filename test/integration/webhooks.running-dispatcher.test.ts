import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebhookSender } from "../../src/webhooks/sender.js";
import { LEASE_MARGIN_MS } from "../../src/webhooks/dispatcher.js";
import { createTestApp, type ReceiverApp, type TestApp, type TestDatabase } from "../helpers/app.js";
import { activated, adminCall, type SeededClient, scim } from "../helpers/seed.js";
import { checkedDelivery, kinds } from "../helpers/webhook-receiver.js";
import { outboxCount } from "../helpers/webhooks.js";
import { useTestApp } from "../helpers/suite.js";
import { PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";

const TIMEOUT_MS = 2000;

let n = 0;
const unique = (prefix: string) => `${prefix}-${++n}-${Math.random().toString(36).slice(2, 8)}`;

async function createUser(e: TestApp, c: SeededClient, userName = unique("u")): Promise<string> {
  const res = await scim(e, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

const nick = (e: TestApp, c: SeededClient, id: string, value: string) =>
  scim(e, c, "PATCH", `/Users/${id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: "replace", path: "nickName", value }],
  });

describe("no retry", () => {
  let e: ReceiverApp;
  beforeAll(async () => {
    e = await createTestApp({ receiver: true });
  });
  afterAll(async () => e.close());

  it("a delivery answered 500 is sent exactly once and leaves nothing pending", async () => {
    e.receiver.answer(500);
    await createUser(e, e.client);
    expect(kinds(await e.deliver())).toEqual(["user.created"]);
    expect(await e.webhooks.dispatcher.drain()).toBe(0);
    e.clock.advance(TIMEOUT_MS + LEASE_MARGIN_MS + 60_000);
    expect(await e.webhooks.dispatcher.drain()).toBe(0);
    expect(e.receiver.received).toHaveLength(1);
    expect(await outboxCount(e.db)).toBe(0);
    e.receiver.answer(200);
  });
});

describe("ordering per resource", () => {
  let e: ReceiverApp;
  beforeAll(async () => {
    e = await createTestApp({ receiver: true, webhooks: { pollIntervalMs: 10 } });
  });
  afterAll(async () => e.close());

  it("quick PATCHes of several users arrive in commit order per user, with the running dispatcher", async () => {
    const users = [await createUser(e, e.client), await createUser(e, e.client), await createUser(e, e.client)];
    await e.deliver();
    // A slow, uneven receiver: parallel deliveries of different users overtake each other, one user's cannot.
    e.receiver.answer(() => ({ status: 200, delayMs: Math.floor(Math.random() * 15) }));
    const before = e.receiver.received.length;
    e.webhooks.dispatcher.start();
    const rounds = 8;
    for (let i = 0; i < rounds; i++) {
      await Promise.all(users.map((id) => nick(e, e.client, id, `n${i}`)));
    }
    await e.receiver.waitFor(before + rounds * users.length);
    await e.webhooks.dispatcher.stop();
    const arrived = e.receiver.received.slice(before).map((r) => checkedDelivery(r));
    expect(arrived).toHaveLength(rounds * users.length);
    for (const id of users) {
      const mine = arrived.filter((d) => d.body.data.id === id);
      expect(mine.map((d) => (d.body.data.raw as { nickName: string }).nickName)).toEqual(
        Array.from({ length: rounds }, (_, i) => `n${i}`),
      );
    }
    e.receiver.answer(200);
  });
});

describe("a SCIM write wakes the running dispatcher", () => {
  let e: ReceiverApp;
  beforeAll(async () => {
    // Polling so rare that only the wake-up after the write can deliver within the test.
    e = await createTestApp({ receiver: true, webhooks: { pollIntervalMs: 600_000 } });
    e.webhooks.dispatcher.start();
  });
  afterAll(async () => e.close());

  it.each([
    ["/scim", "/v2/Users"],
    ["/SCIM", "/V2/users"],
  ])("also through the case-insensitive path %s/{id}%s", async (prefix, suffix) => {
    const before = e.receiver.received.length;
    const res = await e.request({
      method: "POST",
      url: `${prefix}/${e.client.clientId}${suffix}`,
      headers: e.client.headers,
      payload: JSON.stringify({ schemas: [USER_SCHEMA], userName: unique("wake") }),
    });
    expect(res.statusCode, res.body).toBe(201);
    await e.receiver.waitFor(before + 1, 3000);
  });
});

describe("restart between commit and dispatch", () => {
  const { database, receiver } = useTestApp({ app: false, hooks: true });

  it("an event committed by a closed instance is delivered by a new instance on the same database", async () => {
    const first = await createTestApp({ database, receiver });
    const id = await createUser(first, first.client);
    expect((await nick(first, first.client, id, "before-restart")).statusCode).toBe(200);
    await first.close();
    expect(receiver.received).toHaveLength(0);

    const second = await createTestApp({ database, receiver });
    const ds = await second.deliver();
    expect(kinds(ds)).toEqual(["user.created", "user.updated"]);
    expect(ds.map((d) => d.body.directory_id)).toEqual([first.client.clientId, first.client.clientId]);
    expect(ds[1]?.body.data).toMatchObject({ id, raw: { nickName: "before-restart" } });
    await second.close();
    receiver.reset();
  });

  it("an event claimed by an instance that died before recording it is sent by another after the lease", async () => {
    // The first instance claims the event, hands it to a sender that never answers, and is gone.
    let handedOver: () => void = () => {};
    const sending = new Promise<void>((resolve) => {
      handedOver = resolve;
    });
    const dying: WebhookSender = {
      send: () => {
        handedOver();
        return new Promise(() => {});
      },
    };
    const first = await createTestApp({ database, receiver, webhooks: { sender: dying, timeoutMs: TIMEOUT_MS } });
    await createUser(first, first.client);
    await activated(first, first.client);
    void first.webhooks.dispatcher.runOnce();
    await sending;
    // The user's event and, on their own key, the connection's connection.created and connection.activated.
    expect(await leased(database)).toEqual(["connection.activated", "connection.created", "user.created"]);
    // The app goes away, its dispatcher stuck mid-send, as a process that dies does.
    await first.app.close();

    const second = await createTestApp({ database, receiver });
    expect(await second.deliver()).toEqual([]);
    second.clock.advance(TIMEOUT_MS + LEASE_MARGIN_MS + 1);
    const ds = await second.deliver();
    expect(kinds(ds)).toEqual(["user.created"]);
    expect(await outboxCount(database.db)).toBe(0);
    await second.close();
    receiver.reset();
  });
});

describe("two instances on one database", () => {
  const { database, receiver } = useTestApp({ app: false, hooks: true });
  let a: ReceiverApp;
  let b: ReceiverApp;
  beforeAll(async () => {
    a = await createTestApp({ database, receiver, webhooks: { pollIntervalMs: 5, concurrency: 8 } });
    b = await createTestApp({ database, receiver, webhooks: { pollIntervalMs: 5, concurrency: 8 } });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  it("never deliver one event twice (many events, both dispatchers running)", async () => {
    a.webhooks.dispatcher.start();
    b.webhooks.dispatcher.start();
    const perInstance = 60;
    const work = async (e: ReceiverApp) => {
      for (let i = 0; i < perInstance; i++) {
        const id = await createUser(e, e.client);
        await nick(e, e.client, id, "x");
      }
    };
    await Promise.all([work(a), work(b)]);
    const expected = 2 * perInstance * 2;
    await receiver.waitFor(expected, 20_000);
    await a.webhooks.dispatcher.stop();
    await b.webhooks.dispatcher.stop();
    // Whatever a stopped dispatcher left is drained by hand, racing the other.
    await Promise.all([a.webhooks.dispatcher.drain(), b.webhooks.dispatcher.drain()]);

    const ids = receiver.received.map((r) => checkedDelivery(r).webhookId);
    expect(ids).toHaveLength(expected);
    expect(new Set(ids).size).toBe(expected);
    expect(await outboxCount(database.db)).toBe(0);
  });

  it("racing drains of both instances deliver each event once", async () => {
    receiver.reset();
    for (let i = 0; i < 40; i++) await createUser(i % 2 === 0 ? a : b, (i % 2 === 0 ? a : b).client);
    const [x, y] = await Promise.all([a.webhooks.dispatcher.drain(), b.webhooks.dispatcher.drain()]);
    expect(x + y).toBe(40);
    const ids = receiver.received.map((r) => checkedDelivery(r).webhookId);
    expect(new Set(ids).size).toBe(40);
    expect(ids).toHaveLength(40);
  });
});

describe("event log through the admin API", () => {
  let e: ReceiverApp;
  let logged: SeededClient;
  let unlogged: SeededClient;
  beforeAll(async () => {
    e = await createTestApp({ receiver: true, client: { log_webhook_events: true } });
    logged = e.client;
    unlogged = await e.seed({ log_webhook_events: false });
  });
  afterAll(async () => e.close());

  const list = (c: SeededClient, query = "") => adminCall(e, "GET", `/scimClients/${c.clientId}/webhookEvents${query}`);

  it("lists every attempt newest first, filters by event and success, pages, and re-sends one", async () => {
    e.receiver.answer((r) => (r.json.event === "user.updated" ? 500 : 200));
    const id = await createUser(e, logged);
    await activated(e, logged);
    // The connection's own events go out with user.created (the receiver records the directory's kinds only).
    const ds = await e.deliver();
    await nick(e, logged, id, "fails");
    ds.push(...(await e.deliver()));
    expect(kinds(ds)).toEqual(["user.created", "user.updated"]);

    const all = await list(logged);
    expect(all.statusCode).toBe(200);
    const entries = all.json().webhook_events as Record<string, unknown>[];
    const userEvents = entries.filter((x) => String(x.event).startsWith("user."));
    expect(userEvents.map((x) => [x.event, x.success, x.status_code, x.error, x.resend])).toEqual([
      ["user.updated", false, 500, "HTTP 500", false],
      ["user.created", true, 200, null, false],
    ]);
    const own = entries.filter((x) => String(x.event).startsWith("connection."));
    expect(own.map((x) => [x.event, x.success]).sort()).toEqual([
      ["connection.activated", true],
      ["connection.created", true],
    ]);
    expect(entries).toHaveLength(4);
    expect(entries[0]?.event).toBe("user.updated");
    // The logged payload is exactly what the receiver got, and event_id is the webhook-id.
    expect(entries[0]?.payload).toEqual(ds[1]?.body);
    expect(entries[0]?.event_id).toBe(ds[1]?.webhookId);
    expect(entries[0]?.directory_id).toBe(logged.clientId);

    const failed = (await list(logged, "?success=false")).json().webhook_events as Record<string, unknown>[];
    expect(failed.map((x) => x.event_id)).toEqual([ds[1]?.webhookId]);
    const created = (await list(logged, "?event=user.created")).json().webhook_events as Record<string, unknown>[];
    expect(created.map((x) => x.event_id)).toEqual([ds[0]?.webhookId]);
    const page1 = (await list(logged, "?page_size=1")).json();
    expect(page1.webhook_events).toHaveLength(1);
    const page2 = (await list(logged, `?page_size=1&page_token=${page1.next_page_token as string}`)).json();
    expect((page2.webhook_events as Record<string, unknown>[]).map((x) => x.id)).toEqual([entries[1]?.id]);

    e.receiver.answer(200);
    const resent = await adminCall(
      e,
      "POST",
      `/scimClients/${logged.clientId}/webhookEvents/${ds[1]?.webhookId}:resend`,
    );
    expect(resent.statusCode, resent.body).toBe(200);
    expect(resent.json()).toMatchObject({ event: "user.updated", success: true, status_code: 200, resend: true });
    const again = (await e.deliver()).map((x) => x);
    expect(again).toHaveLength(1);
    expect(again[0]?.webhookId).toBe(ds[1]?.webhookId);
    expect(again[0]?.received.rawBody.equals(ds[1]?.received.rawBody ?? Buffer.alloc(0))).toBe(true);

    const after = (await list(logged)).json().webhook_events as Record<string, unknown>[];
    expect(after.filter((x) => String(x.event).startsWith("user.")).map((x) => [x.event, x.success, x.resend])).toEqual(
      [
        ["user.updated", true, true],
        ["user.updated", false, false],
        ["user.created", true, false],
      ],
    );
  });

  it("with logging off, deliveries leave no entry and no outbox row", async () => {
    await createUser(e, unlogged);
    expect(kinds(await e.deliver())).toEqual(["user.created"]);
    expect((await list(unlogged)).json().webhook_events).toEqual([]);
    expect(await outboxCount(e.db)).toBe(0);
  });
});

/** The kinds of the outbox rows under a lease, sorted. */
async function leased(database: TestDatabase): Promise<string[]> {
  const rows = await database.db
    .selectFrom("webhook_outbox")
    .select("event")
    .where("claimed_until", "is not", null)
    .orderBy("event")
    .execute();
  return rows.map((r) => r.event);
}
