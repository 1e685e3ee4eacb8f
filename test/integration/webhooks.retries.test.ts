import { beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/platform/clock.js";
import { uuidv7 } from "../../src/platform/ids.js";
import { RETRY_SCHEDULE_MS } from "../../src/webhooks/dispatcher.js";
import { adminCall, type SeededClient, seedClient } from "../helpers/seed.js";
import { outboxCount, recordEvents, testWebhooks, userUpdate as update } from "../helpers/webhooks.js";
import { useTestApp } from "../helpers/suite.js";

const { t, database, clock, receiver } = useTestApp({
  clock: new ManualClock(Date.parse("2026-03-01T00:00:00Z")),
  webhooks: true,
  hooks: true,
});
beforeEach(() => receiver.reset());

/** A client with a webhook, its own connection.created delivered before the test's events. */
const client = async (retry?: string) => {
  const c = await seedClient(t, {
    webhook: { url: receiver.url, secret: "whsec_retry_0123456789", ...(retry === undefined ? {} : { retry }) },
    log_webhook_events: true,
  });
  expect(await drain()).toBe(1);
  receiver.reset();
  return c;
};
const label = (json: Record<string, unknown>) =>
  `${(json.data as { id: string }).id.slice(-4)}:${(json.data as { raw: { displayName: string } }).raw.displayName}`;
/** A fresh dispatcher each time: the retry schedule lives in PostgreSQL, not in a process. */
const drain = () => testWebhooks(database.db, clock).dispatcher.drain();
/** Past a scheduled wait, jitter (±10 %) included. */
const pastWait = (waitMs: number) => clock.advance(Math.ceil(waitMs * 1.1) + 1);

/** The attempts of the user.updated events the tests record (not the connection's own), oldest first. */
async function log(c: SeededClient) {
  const res = await adminCall(t, "GET", `/scimClients/${c.clientId}/webhookEvents?page_size=100&event=user.updated`);
  expect(res.statusCode).toBe(200);
  return (res.json().webhook_events as Record<string, unknown>[]).reverse();
}

describe('webhook.retry = "backoff"', () => {
  it("a receiver failing twice gets the event on the third attempt; the resource waits, others flow", async () => {
    const c = await client("backoff");
    const [a, b] = [uuidv7(), uuidv7()];
    // The receiver fails a's first event twice, then answers 200 to everything.
    let failures = 0;
    receiver.answer((r) => (label(r.json) === `${a.slice(-4)}:1` && ++failures <= 2 ? 503 : 200));
    await recordEvents(database.db, testWebhooks(database.db, clock), c.clientId, [
      update(a, 1),
      update(a, 2),
      update(b, 1),
    ]);
    const A = a.slice(-4);
    const B = b.slice(-4);

    await drain();
    expect(receiver.received.map((r) => label(r.json)).sort()).toEqual([`${A}:1`, `${B}:1`].sort());
    // Not due yet: nothing goes out, and a:2 waits behind a:1.
    expect(await drain()).toBe(0);
    pastWait(RETRY_SCHEDULE_MS[0] ?? 0);
    await drain();
    expect(await drain()).toBe(0);
    pastWait(RETRY_SCHEDULE_MS[1] ?? 0);
    await drain();
    expect(receiver.received.map((r) => label(r.json))).toEqual(
      expect.arrayContaining([`${A}:1`, `${A}:1`, `${A}:1`, `${A}:2`, `${B}:1`]),
    );
    const forA = receiver.received.map((r) => label(r.json)).filter((l) => l.startsWith(A));
    expect(forA).toEqual([`${A}:1`, `${A}:1`, `${A}:1`, `${A}:2`]);
    expect(await outboxCount(database.db)).toBe(0);

    const first = receiver.received.find((r) => label(r.json) === `${A}:1`);
    const entries = (await log(c)).filter((e) => e.event_id === first?.headers["webhook-id"]);
    expect(entries.map((e) => [e.attempt, e.state, e.status_code])).toEqual([
      [1, "retrying", 503],
      [2, "retrying", 503],
      [3, "delivered", 200],
    ]);
    expect(entries[0]?.next_attempt_time).not.toBeNull();
    expect(entries[2]?.next_attempt_time).toBeNull();
  });

  it("gives up after the 8th attempt (7 retries) and marks it failed", async () => {
    const c = await client("backoff");
    receiver.answer(500);
    await recordEvents(database.db, testWebhooks(database.db, clock), c.clientId, [update(uuidv7(), 1)]);
    await drain();
    for (const wait of RETRY_SCHEDULE_MS) {
      pastWait(wait);
      await drain();
    }
    pastWait(24 * 3_600_000);
    expect(await drain()).toBe(0);
    expect(receiver.received).toHaveLength(8);
    const entries = await log(c);
    expect(entries.map((e) => e.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(entries.at(-1)).toMatchObject({ state: "failed", next_attempt_time: null });
    expect(entries.slice(0, -1).every((e) => e.state === "retrying")).toBe(true);
  });
});

describe('webhook.retry = "none" (the default)', () => {
  it("a failed delivery is not retried and is logged as failed", async () => {
    const c = await client();
    receiver.answer(500);
    await recordEvents(database.db, testWebhooks(database.db, clock), c.clientId, [update(uuidv7(), 1)]);
    await drain();
    pastWait(24 * 3_600_000);
    expect(await drain()).toBe(0);
    expect(receiver.received).toHaveLength(1);
    expect(await log(c)).toMatchObject([{ attempt: 1, state: "failed", next_attempt_time: null }]);
  });

  it("is set and changed through the admin API; other values are refused", async () => {
    const c = await client();
    const got = await adminCall(t, "GET", `/scimClients/${c.clientId}`);
    expect(got.json().webhook.retry).toBe("none");
    const patched = await adminCall(t, "PATCH", `/scimClients/${c.clientId}?update_mask=webhook.retry`, {
      webhook: { retry: "backoff" },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().webhook).toMatchObject({ retry: "backoff", secret_set: true });
    const bad = await adminCall(t, "PATCH", `/scimClients/${c.clientId}?update_mask=webhook.retry`, {
      webhook: { retry: "forever" },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toContain("webhook.retry");
  });
});
