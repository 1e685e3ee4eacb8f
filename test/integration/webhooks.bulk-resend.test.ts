import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/platform/clock.js";
import { uuidv7 } from "../../src/platform/ids.js";
import { adminCall, type SeededClient, seedClient } from "../helpers/seed.js";
import { outboxCount, recordEvents, testWebhooks, userUpdate as update } from "../helpers/webhooks.js";
import { useTestApp } from "../helpers/suite.js";

const { t, database, clock, receiver } = useTestApp({
  clock: new ManualClock(Date.parse("2026-03-01T00:00:00Z")),
  webhooks: true,
  hooks: true,
});
let c: SeededClient;

beforeAll(async () => {
  c = await seedClient(t, {
    webhook: { url: receiver.url, secret: "whsec_bulk_0123456789" },
    log_webhook_events: true,
  });
});
beforeEach(() => receiver.reset());

const label = (json: Record<string, unknown>) =>
  `${(json.data as { id: string }).id.slice(-4)}:${(json.data as { raw: { displayName: string } }).raw.displayName}`;
const drain = () => testWebhooks(database.db, clock).dispatcher.drain();
const resend = (body: unknown, clientId = c.clientId) =>
  adminCall(t, "POST", `/scimClients/${clientId}/webhookEvents:resend`, body);

describe("POST …/webhookEvents:resend", () => {
  it("re-queues every failed event, with its webhook-id, in order per resource; once delivered, none again", async () => {
    const [a, b] = [uuidv7(), uuidv7()];
    const A = a.slice(-4);
    const B = b.slice(-4);
    receiver.answer((r) => (label(r.json) === `${B}:2` ? 200 : 500));
    await recordEvents(database.db, testWebhooks(database.db, clock), c.clientId, [
      update(a, 1),
      update(a, 2),
      update(b, 1),
      update(b, 2),
    ]);
    await drain();
    const firstIds = new Map(receiver.received.map((r) => [label(r.json), String(r.headers["webhook-id"])]));
    expect(firstIds.size).toBe(4);
    receiver.reset();

    clock.advance(60_000);
    const queued = await resend({ state: "failed", since: "2026-03-01T00:00:00Z" });
    expect(queued.statusCode).toBe(200);
    expect(queued.json()).toEqual({ queued: 3 });
    expect(await outboxCount(database.db)).toBe(3);
    await drain();
    const again = receiver.received.map((r) => label(r.json));
    expect(again.filter((l) => l.startsWith(A))).toEqual([`${A}:1`, `${A}:2`]);
    expect(again.filter((l) => l.startsWith(B))).toEqual([`${B}:1`]);
    for (const r of receiver.received) expect(r.headers["webhook-id"]).toBe(firstIds.get(label(r.json)));

    expect((await resend({ state: "failed" })).json()).toEqual({ queued: 0 });
  });

  it("counts only failures since the given time", async () => {
    receiver.answer(500);
    await recordEvents(database.db, testWebhooks(database.db, clock), c.clientId, [update(uuidv7(), 1)]);
    await drain();
    const future = new Date(clock.now().getTime() + 1000).toISOString();
    expect((await resend({ state: "failed", since: future })).json()).toEqual({ queued: 0 });
    expect((await resend({ state: "failed", since: clock.now().toISOString() })).json()).toEqual({ queued: 1 });
  });

  it("refuses other states, bad times and unknown clients", async () => {
    expect((await resend({ state: "delivered" })).statusCode).toBe(400);
    expect((await resend({})).statusCode).toBe(400);
    expect((await resend({ state: "failed", since: "yesterday" })).statusCode).toBe(400);
    expect((await resend({ state: "failed" }, "nope")).statusCode).toBe(404);
  });
});
