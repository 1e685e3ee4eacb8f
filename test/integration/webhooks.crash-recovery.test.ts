import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/platform/clock.js";
import { uuidv7 } from "../../src/platform/ids.js";
import { MAX_INTERRUPTED } from "../../src/webhooks/dispatcher.js";
import type { Webhooks } from "../../src/webhooks/index.js";
import { INTERRUPTED_ERROR } from "../../src/webhooks/outbox-repo.js";
import { HttpWebhookSender, type WebhookSender } from "../../src/webhooks/sender.js";
import { adminCall, type SeededClient, seedClient } from "../helpers/seed.js";
import { outboxCount, recordEvents, testWebhooks, numberOf, userUpdate as update } from "../helpers/webhooks.js";
import { useTestApp } from "../helpers/suite.js";
import { LOOPBACK_WEBHOOK_ALLOW } from "../helpers/constants.js";

// A dispatcher "dies" in these tests the way a killed process does: its request has reached the receiver, it never
// records the answer, and it never renews its heartbeat again. No clock is advanced: leases are not waited out.

const { t, database, clock, receiver } = useTestApp({
  clock: new ManualClock(Date.now()),
  webhooks: true,
  hooks: true,
});
let c: SeededClient;
const real = new HttpWebhookSender({ timeoutMs: 5000, urlAllow: LOOPBACK_WEBHOOK_ALLOW });

beforeAll(async () => {
  c = await seedClient(t, {
    webhook: { url: receiver.url, secret: "whsec_crash_0123456789" },
    log_webhook_events: true,
  });
  // The connection's own connection.created goes before the tests' events, which they count.
  expect(await testWebhooks(database.db, clock).dispatcher.drain()).toBe(1);
});
afterAll(async () => {
  await real.close();
});
beforeEach(() => receiver.reset());

/** Sends `survives` events for real, then sends one more and never returns: the process died mid-delivery. */
function dyingAfter(survives: number): WebhookSender {
  let left = survives;
  return {
    async send(request) {
      if (left-- > 0) return real.send(request);
      await real.send(request);
      return new Promise(() => {});
    },
  };
}

/** Runs a dispatcher that dies after `survives` deliveries, and waits until its last request has reached us. */
async function runAndDie(survives: number, how: "row deleted" | "heartbeat stale"): Promise<Webhooks> {
  const webhooks = testWebhooks(database.db, clock, { sender: dyingAfter(survives) });
  const before = receiver.received.length;
  void webhooks.dispatcher.runOnce();
  await receiver.waitFor(before + survives + 1);
  const id = webhooks.dispatcher.id;
  if (how === "row deleted") await sql`delete from webhook_dispatchers where id = ${id}::uuid`.execute(database.db);
  else {
    await sql`update webhook_dispatchers set heartbeat_at = now() - interval '1 hour' where id = ${id}::uuid`.execute(
      database.db,
    );
  }
  return webhooks;
}

/** The attempts of the user.updated events the tests record. */
async function eventLog(): Promise<{ event_id: string; attempt: number; success: boolean; error: string | null }[]> {
  const res = await adminCall(t, "GET", `/scimClients/${c.clientId}/webhookEvents?page_size=1000&event=user.updated`);
  expect(res.statusCode).toBe(200);
  return res.json().webhook_events;
}

describe("webhook delivery across dispatcher crashes", () => {
  it("takes a dead dispatcher's claims over at once, logs the interrupted attempt, and charges no queued event", async () => {
    const u = uuidv7();
    await recordEvents(
      database.db,
      testWebhooks(database.db, clock),
      c.clientId,
      Array.from({ length: 40 }, (_, i) => update(u, i + 1)),
    );
    // Twelve crashes — more than MAX_INTERRUPTED — each in the middle of the backlog, each while another event is sent.
    const crashes = 12;
    expect(crashes).toBeGreaterThan(MAX_INTERRUPTED);
    for (let i = 0; i < crashes; i++) await runAndDie(2, i % 2 === 0 ? "row deleted" : "heartbeat stale");
    const survivor = testWebhooks(database.db, clock);
    await survivor.dispatcher.drain();
    expect(await outboxCount(database.db)).toBe(0);

    const arrivals = receiver.received.map((r) => numberOf(r.json));
    // Every event, in commit order; the only repeats are the interrupted attempts, each sent again right away.
    expect([...new Set(arrivals)]).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    const repeats = arrivals.filter((n, i) => i > 0 && arrivals[i - 1] === n);
    expect(repeats).toHaveLength(crashes);
    expect(arrivals.length).toBe(40 + crashes);

    const log = await eventLog();
    const interrupted = log.filter((e) => e.error === INTERRUPTED_ERROR);
    expect(interrupted).toHaveLength(crashes);
    expect(interrupted.every((e) => e.attempt === 1 && !e.success)).toBe(true);
    expect(log.filter((e) => e.error?.startsWith("given up"))).toEqual([]);
    // Each event was delivered once by its own count: the interrupted ones on their second attempt, the rest on the first.
    const successes = log.filter((e) => e.success);
    expect(new Set(successes.map((e) => e.event_id)).size).toBe(40);
    const interruptedIds = new Set(interrupted.map((e) => e.event_id));
    for (const s of successes) expect(s.attempt).toBe(interruptedIds.has(s.event_id) ? 2 : 1);
  });

  it("gives up only an event whose own attempts were interrupted MAX_INTERRUPTED times; the next one flows", async () => {
    const u = uuidv7();
    await recordEvents(database.db, testWebhooks(database.db, clock), c.clientId, [update(u, 1), update(u, 2)]);
    for (let i = 0; i < MAX_INTERRUPTED; i++) await runAndDie(0, "row deleted");
    const survivor = testWebhooks(database.db, clock);
    await survivor.dispatcher.drain();
    expect(await outboxCount(database.db)).toBe(0);
    const arrivals = receiver.received.map((r) => numberOf(r.json));
    expect(arrivals).toEqual([...Array.from({ length: MAX_INTERRUPTED }, () => 1), 2]);
    const log = (await eventLog()).filter((e) => e.error?.startsWith("given up"));
    expect(log).toHaveLength(1);
    expect(log[0]?.attempt).toBe(MAX_INTERRUPTED + 1);
  });

  it("leaves a live dispatcher's claims alone", async () => {
    const u = uuidv7();
    await recordEvents(database.db, testWebhooks(database.db, clock), c.clientId, [update(u, 1), update(u, 2)]);
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    receiver.answer(() => ({ status: 200, after: gate }));
    const busy = testWebhooks(database.db, clock);
    const running = busy.dispatcher.runOnce();
    await receiver.waitFor(1);
    // Its heartbeat is fresh: another dispatcher finds nothing to take over.
    expect(await testWebhooks(database.db, clock).dispatcher.runOnce()).toBe(0);
    release();
    await running;
    expect(receiver.received.map((r) => numberOf(r.json))).toEqual([1, 2]);
  });
});
