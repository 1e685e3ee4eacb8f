import { sql } from "kysely";
import { Webhook } from "standardwebhooks";
import { beforeAll, describe, expect, it } from "vitest";
import { PRODUCT, TENANT, USER_SCHEMA, WEBHOOK_SECRET } from "../helpers/constants.js";
import { FEED_WAIT } from "../helpers/events.js";
import { adminCall, clientIn, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";
import { type Delivery, kinds } from "../helpers/webhook-receiver.js";
import { testWebhooks } from "../helpers/webhooks.js";

const { t, receiver } = useTestApp({ receiver: true });

beforeAll(async () => {
  receiver.knows("all");
  await t.deliver();
});

interface FeedEvent {
  id: string;
  event: string;
  source: string;
  directory_id: string | null;
}

const of = (c: SeededClient, ds: readonly Delivery[]) => ds.filter((d) => d.body.directory_id === c.clientId);

async function feedOf(c: SeededClient, count: number): Promise<FeedEvent[]> {
  // The feed hands out an event once every older transaction of the server has ended: poll, bounded.
  let events: FeedEvent[] = [];
  await expect
    .poll(async () => {
      const feed = await adminCall(t, "GET", `/events?organization_id=${c.organizationId}`);
      expect(feed.statusCode, feed.body).toBe(200);
      events = feed.json().events as FeedEvent[];
      return events.length;
    }, FEED_WAIT)
    .toBe(count);
  return events;
}

async function pendingRows(clientId: string): Promise<{ outbox: number; retired: number }> {
  const r = await sql<{ outbox: number; retired: number }>`select
      (select count(*) from webhook_outbox where client_id = ${clientId})::int as outbox,
      (select count(*) from retired_webhooks where client_id = ${clientId})::int as retired`.execute(t.db);
  const row = r.rows[0];
  if (row === undefined) throw new Error("no counts");
  return row;
}

/** Creates a user; the connection's first success marks it active after the answer: wait for it, bounded. */
const createUser = async (c: SeededClient, userName: string) => {
  const res = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName });
  expect(res.statusCode, res.body).toBe(201);
  await expect
    .poll(async () => (await adminCall(t, "GET", `/scimClients/${c.clientId}`)).json().activated_time, FEED_WAIT)
    .not.toBeNull();
};

describe("a connection's own events", () => {
  it("are in the feed with their source, outlive the connection, and reach its webhook signed, in order, once each", async () => {
    const c = await t.seed();
    await createUser(c, "first@example.com");
    expect(await pendingRows(c.clientId)).toEqual({ outbox: 3, retired: 0 });
    // Deleted before anything was delivered: what the connection owes still goes out, connection.deleted last.
    expect((await adminCall(t, "DELETE", `/scimClients/${c.clientId}`)).statusCode).toBe(200);
    expect(await pendingRows(c.clientId)).toEqual({ outbox: 4, retired: 1 });

    const events = await feedOf(c, 4);
    expect(events[0]).toMatchObject({ event: "connection.created", source: "admin" });
    expect(
      events
        .slice(1, 3)
        .map((e) => `${e.event}/${e.source}`)
        .sort(),
    ).toEqual(["connection.activated/scim", "user.created/scim"]);
    expect(events[3]).toMatchObject({ event: "connection.deleted", source: "admin" });
    expect(events.every((e) => e.directory_id === c.clientId)).toBe(true);

    const delivered = of(c, await t.deliver());
    // checkedDelivery verified Service-Signature; the Standard Webhooks headers verify too.
    const std = new Webhook(new TextEncoder().encode(WEBHOOK_SECRET), { format: "raw" });
    for (const d of delivered) {
      const headers = Object.fromEntries(Object.entries(d.received.headers).map(([k, v]) => [k, String(v)]));
      expect(std.verify(d.received.rawBody, headers)).toMatchObject({ event: d.event });
    }
    const connection = delivered.filter((d) => d.event.startsWith("connection."));
    expect(kinds(connection)).toEqual(["connection.created", "connection.activated", "connection.deleted"]);
    expect(kinds(delivered).at(-1)).toBe("connection.deleted");
    expect(kinds(delivered).sort()).toEqual(events.map((e) => e.event).sort());
    // Each once, under the feed's id, with the connection's data and never a secret.
    expect(delivered.map((d) => d.webhookId).sort()).toEqual(events.map((e) => e.id).sort());
    expect(delivered.map((d) => d.body.id)).toEqual(delivered.map((d) => d.webhookId));
    const deleted = connection[2];
    expect(deleted?.body).toMatchObject({ directory_id: c.clientId, tenant: TENANT, product: PRODUCT });
    expect(deleted?.body.data).toMatchObject({ id: c.clientId, organization_id: c.organizationId, state: "deleted" });
    for (const d of connection) {
      expect(d.received.rawBody.toString("utf8")).not.toContain(WEBHOOK_SECRET);
      expect(d.received.rawBody.toString("utf8")).not.toContain(c.secret);
    }
    // Delivered: the deleted connection's endpoint and secret are gone, and nothing is sent twice.
    expect(await pendingRows(c.clientId)).toEqual({ outbox: 0, retired: 0 });
    expect(kinds(of(c, await t.deliver()))).toEqual([]);
  });

  it("the webhook of a live connection carries its directory's changes after its own events", async () => {
    const c = await t.seed();
    await createUser(c, "second@example.com");
    const delivered = kinds(of(c, await t.deliver()));
    expect(delivered[0]).toBe("connection.created");
    expect(delivered.slice(1).sort()).toEqual(["connection.activated", "user.created"]);
    await createUser(c, "third@example.com");
    expect(kinds(of(c, await t.deliver()))).toEqual(["user.created"]);
  });

  it("a connection without a webhook gets no outbox rows, deleted or not; its events are in the feed", async () => {
    const c = await seedClient(t);
    await createUser(c, "fourth@example.com");
    expect(await pendingRows(c.clientId)).toEqual({ outbox: 0, retired: 0 });
    expect((await adminCall(t, "DELETE", `/scimClients/${c.clientId}`)).statusCode).toBe(200);
    expect(await pendingRows(c.clientId)).toEqual({ outbox: 0, retired: 0 });
    expect((await feedOf(c, 4)).map((e) => e.event).at(-1)).toBe("connection.deleted");
    expect(of(c, await t.deliver())).toEqual([]);
  });

  it("a webhook set after the creation gets the events from then on: connection.activated, not connection.created", async () => {
    const c = await seedClient(t, { tenant: TENANT, product: PRODUCT });
    const patched = await adminCall(t, "PATCH", `/scimClients/${c.clientId}?update_mask=webhook`, {
      webhook: { url: receiver.url, secret: WEBHOOK_SECRET },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    await createUser(c, "fifth@example.com");
    expect(kinds(of(c, await t.deliver())).sort()).toEqual(["connection.activated", "user.created"]);
  });

  it("a connection deleted with its webhook cleared owes nothing: its pending events go with it", async () => {
    const c = await t.seed();
    await createUser(c, "sixth@example.com");
    const cleared = await adminCall(t, "PATCH", `/scimClients/${c.clientId}?update_mask=webhook`, {});
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect((await pendingRows(c.clientId)).outbox).toBe(3);
    expect((await adminCall(t, "DELETE", `/scimClients/${c.clientId}`)).statusCode).toBe(200);
    expect(await pendingRows(c.clientId)).toEqual({ outbox: 0, retired: 0 });
    expect(of(c, await t.deliver())).toEqual([]);
  });

  it("an organization's deletion takes its connections' pending events and sends nothing", async () => {
    const c = await t.seed();
    await createUser(c, "seventh@example.com");
    expect((await pendingRows(c.clientId)).outbox).toBe(3);
    expect((await adminCall(t, "DELETE", `/organizations/${c.organizationId}`)).statusCode).toBe(200);
    expect(await pendingRows(c.clientId)).toEqual({ outbox: 0, retired: 0 });
    expect(of(c, await t.deliver())).toEqual([]);
  });

  it("a connection deleted while one of its events is in flight: that event is delivered once, the rest follow, connection.deleted last", async () => {
    const c = await t.seed({ log_webhook_events: true });
    await createUser(c, "inflight@example.com");
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    receiver.answer((r) => (r.json.event === "user.created" ? { status: 200, after: gate } : 200));
    const before = receiver.received.length;
    const draining = t.webhooks.dispatcher.drain();
    await expect
      .poll(() => receiver.received.slice(before).some((r) => r.json.event === "user.created"), FEED_WAIT)
      .toBe(true);
    expect((await adminCall(t, "DELETE", `/scimClients/${c.clientId}`)).statusCode).toBe(200);
    open();
    await draining;
    receiver.answer(200);
    const delivered = of(c, await t.deliver());
    expect(delivered.filter((d) => d.event === "user.created")).toHaveLength(1);
    expect(kinds(delivered).at(-1)).toBe("connection.deleted");
    expect(kinds(delivered).sort()).toEqual([
      "connection.activated",
      "connection.created",
      "connection.deleted",
      "user.created",
    ]);
    expect(await pendingRows(c.clientId)).toEqual({ outbox: 0, retired: 0 });
  });

  it("a connection created again with the client id of a deleted one that still owes: each endpoint gets its own", async () => {
    const clientId = `again-${Math.random().toString(36).slice(2, 10)}`;
    const first = await t.seed({
      client_id: clientId,
      webhook: { url: `${receiver.url}?v=1`, secret: WEBHOOK_SECRET },
    });
    await createUser(first, "again-1@example.com");
    expect((await adminCall(t, "DELETE", `/scimClients/${clientId}`)).statusCode).toBe(200);
    const second = await clientIn(t, first.organizationId, {
      client_id: clientId,
      tenant: TENANT,
      product: PRODUCT,
      webhook: { url: `${receiver.url}?v=2`, secret: WEBHOOK_SECRET },
    });
    await createUser(second, "again-2@example.com");
    const delivered = of(first, await t.deliver());
    const at = (v: string) => kinds(delivered.filter((d) => d.received.path === `/hook?v=${v}`));
    expect(at("1").at(-1)).toBe("connection.deleted");
    expect(at("1").sort()).toEqual([
      "connection.activated",
      "connection.created",
      "connection.deleted",
      "user.created",
    ]);
    expect(at("2").sort()).toEqual(["connection.activated", "connection.created", "user.created"]);
    expect(await pendingRows(clientId)).toEqual({ outbox: 0, retired: 0 });
  });

  it("a deleted connection's endpoint that fails: connection.deleted is given up as any failed delivery, and the endpoint goes", async () => {
    const c = await t.seed();
    expect((await adminCall(t, "DELETE", `/scimClients/${c.clientId}`)).statusCode).toBe(200);
    receiver.answer(503);
    try {
      expect(kinds(of(c, await t.deliver()))).toEqual(["connection.created", "connection.deleted"]);
    } finally {
      receiver.answer(200);
    }
    expect(await pendingRows(c.clientId)).toEqual({ outbox: 0, retired: 0 });
    expect(of(c, await t.deliver())).toEqual([]);
  });

  it("a retired endpoint that owes nothing any more is removed by the running dispatcher's hourly prune", async () => {
    const clientId = `orphan-${Math.random().toString(36).slice(2, 10)}`;
    await sql`insert into retired_webhooks (client_id, last_seq, organization_id, webhook_url, webhook_secret_sealed,
        webhook_retry, retire_time)
      values (${clientId}, 1, gen_random_uuid(), ${receiver.url}, null, 'none', now())`.execute(t.db);
    expect(await pendingRows(clientId)).toEqual({ outbox: 0, retired: 1 });
    const running = testWebhooks(t.db, t.clock);
    running.dispatcher.start();
    try {
      await expect.poll(async () => (await pendingRows(clientId)).retired, FEED_WAIT).toBe(0);
    } finally {
      await running.dispatcher.stop();
    }
  });
});
