import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type DirectoryEvent, groupEventData, userEventData } from "../../src/directory/events.js";
import { uuidv7 } from "../../src/platform/ids.js";
import { verifyWebhookSignature } from "../../src/webhooks/verify.js";
import { adminCall, type SeededClient, seedClient } from "../helpers/seed.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";
import { outboxCount, recordEvents } from "../helpers/webhooks.js";
import { createTestApp, type WebhooksApp } from "../helpers/app.js";

const SECRET = "whsec_event_log_test";
const DAY = 24 * 60 * 60 * 1000;
let w: WebhooksApp;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  w = await createTestApp({ webhooks: true });
});
afterAll(async () => {
  await w.close();
  await receiver.close();
});
beforeEach(() => receiver.reset());

const userCreated = (): DirectoryEvent => {
  const id = uuidv7();
  return { kind: "user.created", resourceId: id, data: userEventData({ id, userName: `${id}@example.com` }) };
};
const groupCreated = (): DirectoryEvent => {
  const id = uuidv7();
  return { kind: "group.created", resourceId: id, data: groupEventData({ id, displayName: "G" }) };
};
/** A client with a webhook, its own connection.created delivered (and logged with `log`) before the test's events. */
const newClient = async (log: boolean) => {
  const c = await seedClient(w, { webhook: { url: receiver.url, secret: SECRET }, log_webhook_events: log });
  expect(await w.webhooks.dispatcher.drain()).toBe(1);
  receiver.reset();
  return c;
};
const list = (c: SeededClient, query = "") => adminCall(w, "GET", `/scimClients/${c.clientId}/webhookEvents${query}`);
const countLogged = async (clientId: string) =>
  Number(
    (
      await w.db
        .selectFrom("webhook_events")
        .where("client_id", "=", clientId)
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe("logging on", () => {
  let c: SeededClient;
  beforeAll(async () => {
    c = await newClient(true);
    // Three successes, then two failures, a millisecond apart so newest-first is well defined.
    for (const [i, e] of [userCreated(), groupCreated(), userCreated(), userCreated(), groupCreated()].entries()) {
      receiver.answer(i < 3 ? 200 : 503);
      await recordEvents(w.db, w.webhooks, c.clientId, [e]);
      await w.webhooks.dispatcher.drain();
      w.clock.advance(1);
    }
    receiver.answer(200);
  });

  it("keeps every attempt with its payload, status, error, duration and time, newest first", async () => {
    const res = await list(c);
    expect(res.statusCode).toBe(200);
    const events = res.json().webhook_events as Record<string, unknown>[];
    // The five recorded events, after the connection's own connection.created.
    expect(events).toHaveLength(6);
    expect(events.map((e) => e.success)).toEqual([false, false, true, true, true, true]);
    expect(events[5]).toMatchObject({
      event: "connection.created",
      success: true,
      payload: { data: { state: "inactive" } },
    });
    expect(events[0]).toMatchObject({
      directory_id: c.clientId,
      event: "group.created",
      status_code: 503,
      error: "HTTP 503",
      resend: false,
      payload: { directory_id: c.clientId, event: "group.created", data: { name: "G" } },
    });
    expect(events[4]).toMatchObject({ event: "user.created", status_code: 200, error: null, success: true });
    for (const e of events) {
      expect(typeof e.duration_ms).toBe("number");
      expect(Date.parse(String(e.attempt_time))).toBeGreaterThan(0);
    }
    expect(res.json().next_page_token).toBe("");
    expect(res.body).not.toContain(SECRET);
  });

  it("pages with page_size and page_token", async () => {
    const first = await list(c, "?page_size=2");
    expect(first.json().webhook_events).toHaveLength(2);
    const token = first.json().next_page_token as string;
    expect(token).not.toBe("");
    const second = await list(c, `?page_size=2&page_token=${token}`);
    const third = await list(c, `?page_size=2&page_token=${second.json().next_page_token}`);
    expect(third.json().next_page_token).toBe("");
    const ids = [first, second, third].flatMap((r) => r.json().webhook_events.map((e: { id: string }) => e.id));
    const all = (await list(c)).json().webhook_events.map((e: { id: string }) => e.id);
    expect(ids).toEqual(all);
  });

  it("filters by event kind and by success", async () => {
    const groups = (await list(c, "?event=group.created")).json().webhook_events;
    expect(groups.map((e: { event: string }) => e.event)).toEqual(["group.created", "group.created"]);
    const failed = (await list(c, "?success=false")).json().webhook_events;
    expect(failed).toHaveLength(2);
    const okUsers = (await list(c, "?success=true&event=user.created")).json().webhook_events;
    expect(okUsers).toHaveLength(2);
  });

  it.each([
    ["?event=user.exploded", /event must be one of/],
    ["?success=maybe", /success must be true or false/],
    ["?page_token=garbage", /page_token/],
  ])("rejects %s with 400", async (query, message) => {
    const res = await list(c, query);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ status: "INVALID_ARGUMENT", message: expect.stringMatching(message) });
  });

  it("answers 404 for an unknown client", async () => {
    const res = await adminCall(w, "GET", "/scimClients/nope/webhookEvents");
    expect(res.statusCode).toBe(404);
  });

  it("re-sends a logged event as a new attempt, signed anew, with the same webhook-id", async () => {
    const failed = (await list(c, "?success=false&page_size=1")).json().webhook_events[0];
    w.clock.advance(60_000);
    const res = await adminCall(w, "POST", `/scimClients/${c.clientId}/webhookEvents/${failed.event_id}:resend`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ event_id: failed.event_id, success: true, status_code: 200, resend: true });
    expect(res.json().id).not.toBe(failed.id);

    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0];
    expect(got?.headers["webhook-id"]).toBe(failed.event_id);
    expect(got?.json).toEqual(failed.payload);
    const header = String(got?.headers["service-signature"]);
    expect(header.startsWith(`t=${w.clock.now().getTime()},`)).toBe(true);
    expect(verifyWebhookSignature(SECRET, header, got?.rawBody ?? "", { now: w.clock.now() })).toBe(true);

    const newest = (await list(c, "?page_size=1")).json().webhook_events[0];
    expect(newest).toMatchObject({ id: res.json().id, resend: true, success: true });
  });

  it("answers 404 when resending an unknown event", async () => {
    const unknown = await adminCall(w, "POST", `/scimClients/${c.clientId}/webhookEvents/${uuidv7()}:resend`);
    expect(unknown.statusCode).toBe(404);
    const malformed = await adminCall(w, "POST", `/scimClients/${c.clientId}/webhookEvents/not-a-uuid:resend`);
    expect(malformed.statusCode).toBe(404);
  });

  it("does not resend another client's event", async () => {
    const other = await newClient(true);
    const event = (await list(c, "?page_size=1")).json().webhook_events[0];
    const res = await adminCall(w, "POST", `/scimClients/${other.clientId}/webhookEvents/${event.event_id}:resend`);
    expect(res.statusCode).toBe(404);
    expect(receiver.received).toHaveLength(0);
  });

  it("prunes entries past the retention period (default 30 days)", async () => {
    // Every client's entries of before (another client's connection.created among them) pass retention together.
    const before = Number(
      (
        await w.db
          .selectFrom("webhook_events")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );
    expect(before).toBeGreaterThan(await countLogged(c.clientId));
    w.clock.advance(29 * DAY);
    await recordEvents(w.db, w.webhooks, c.clientId, [userCreated()]);
    await w.webhooks.dispatcher.drain();
    expect(await w.webhooks.dispatcher.prune()).toBe(0);
    w.clock.advance(2 * DAY);
    expect(await w.webhooks.dispatcher.prune()).toBe(before);
    expect(await countLogged(c.clientId)).toBe(1);
  });
});

describe("logging off", () => {
  it("delivers, then leaves neither an outbox row nor a log entry with the payload", async () => {
    const c = await newClient(false);
    receiver.answer(500);
    await recordEvents(w.db, w.webhooks, c.clientId, [userCreated(), groupCreated()]);
    expect(await w.webhooks.dispatcher.drain()).toBe(2);
    expect(receiver.received).toHaveLength(2);
    expect(await outboxCount(w.db)).toBe(0);
    expect(await countLogged(c.clientId)).toBe(0);
    expect((await list(c)).json()).toEqual({ webhook_events: [], next_page_token: "" });
  });

  it("starts keeping attempts once logging is switched on", async () => {
    const c = await newClient(false);
    const patch = await adminCall(w, "PATCH", `/scimClients/${c.clientId}?update_mask=log_webhook_events`, {
      log_webhook_events: true,
    });
    expect(patch.json().log_webhook_events).toBe(true);
    await recordEvents(w.db, w.webhooks, c.clientId, [userCreated()]);
    await w.webhooks.dispatcher.drain();
    expect(await countLogged(c.clientId)).toBe(1);
  });
});
