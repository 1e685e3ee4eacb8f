import { sql } from "kysely";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/platform/clock.js";
import { uuidv7 } from "../../src/platform/ids.js";
import { openDatabase } from "../../src/storage/database.js";
import { LEASE_MARGIN_MS, MAX_INTERRUPTED } from "../../src/webhooks/dispatcher.js";
import { type ClaimedEvent, claimDue, type OutboxKey, recordAndStart } from "../../src/webhooks/outbox-repo.js";
import { createTestApp } from "../helpers/app.js";
import { useTestApp } from "../helpers/suite.js";
import { type SeededClient, seedClient } from "../helpers/seed.js";
import {
  numberOf,
  outboxCount,
  recordEvents,
  recordRounds,
  testWebhooks,
  userUpdate as update,
} from "../helpers/webhooks.js";

const SECRET = "whsec_outbox_test";
const TIMEOUT_MS = 2000;
/** Claims made by hand in these tests belong to one live owner (its heartbeat row is fresh for the whole file). */
const OWNER = { owner: uuidv7(), ownerStaleMs: 60_000 };
const complete = (events: readonly ClaimedEvent[]) =>
  recordAndStart(
    database.db,
    events.map((event) => ({ event, attempt: null })),
    [],
    clock.now(),
  );
const { database, receiver } = useTestApp({ app: false, hooks: true });
const clock = new ManualClock(Date.now());
let c: SeededClient;

beforeAll(async () => {
  await sql`insert into webhook_dispatchers (id, heartbeat_at, started_at)
    values (${OWNER.owner}::uuid, now() + interval '1 day', now())`.execute(database.db);
  const setup = await createTestApp({ database, clock, webhooks: true });
  c = await seedClient(setup, { webhook: { url: receiver.url, secret: SECRET } });
  // The connection's own connection.created goes before the tests' events, which they count.
  expect(await setup.webhooks.dispatcher.drain()).toBe(1);
  await setup.close();
});
beforeEach(() => receiver.reset());

const userOf = (json: Record<string, unknown>) => (json.data as { id: string }).id;

/** Per user, the displayName sequence numbers in the order the receiver got them. */
function arrivalOrder(): Map<string, number[]> {
  const order = new Map<string, number[]>();
  for (const r of receiver.received) {
    const list = order.get(userOf(r.json)) ?? [];
    list.push(numberOf(r.json));
    order.set(userOf(r.json), list);
  }
  return order;
}

describe("outbox ordering", () => {
  it.each([
    { chain: 1, rounds: "6 per round" },
    { chain: 32, rounds: "all in one round" },
  ])(
    "delivers one resource's events in commit order while different resources go in parallel (chain $chain)",
    async ({ chain }) => {
      // One organization here: its share is the whole pool (by default it is half, webhooks.organization-share).
      const webhooks = testWebhooks(database.db, clock, { concurrency: 8, concurrencyPerOrganization: 8, chain });
      const users = Array.from({ length: 6 }, () => uuidv7());
      // Interleaved commits: one transaction per change, as SCIM requests would make them.
      for (let seq = 0; seq < 15; seq++) {
        for (const u of users) await recordEvents(database.db, webhooks, c.clientId, [update(u, seq)]);
      }
      // Several events of one resource in one transaction keep their order too.
      const first = users[0] ?? "";
      await recordEvents(database.db, webhooks, c.clientId, [update(first, 15), update(first, 16), update(first, 17)]);
      receiver.answer(() => ({ status: 200, delayMs: Math.floor(Math.random() * 4) }));

      const claimedPerRound: number[] = [];
      for (let n = await webhooks.dispatcher.runOnce(); n > 0; n = await webhooks.dispatcher.runOnce()) {
        claimedPerRound.push(n);
      }
      expect(receiver.received).toHaveLength(6 * 15 + 3);
      const order = arrivalOrder();
      for (const u of users) {
        const expected = Array.from({ length: u === first ? 18 : 15 }, (_, i) => i);
        expect(order.get(u)).toEqual(expected);
      }
      // Parallel across resources. Chain 1: never two of one resource in a batch; chain 32: each resource's backlog
      // is claimed at once (its head and the rows after it) and sent one after the other, as the order shows.
      expect(Math.max(...claimedPerRound)).toBe(chain === 1 ? 6 : 6 * 15 + 3);
    },
  );
});

describe("claiming (a backlog costs one index probe per resource)", () => {
  const claimOne = async (after: OutboxKey | undefined) => {
    const now = clock.now();
    const claim = await claimDue(database.db, {
      limit: 1,
      now,
      leaseUntil: new Date(now.getTime() + TIMEOUT_MS),
      claimToken: uuidv7(),
      after,
      ...OWNER,
    });
    await complete(claim.events);
    return claim;
  };

  it("serves resources round robin: a claim goes on after the resource claimed last, then wraps around", async () => {
    const webhooks = testWebhooks(database.db, clock);
    const users = Array.from({ length: 3 }, () => uuidv7());
    await recordRounds(database.db, webhooks, c.clientId, users, 2);
    const claimed: { user: string; seq: number }[] = [];
    let after: OutboxKey | undefined;
    for (let i = 0; i < 6; i++) {
      const claim = await claimOne(after);
      after = claim.cursor;
      for (const e of claim.events) claimed.push({ user: e.orderingKey, seq: numberOf(JSON.parse(e.body)) });
    }
    expect(await claimOne(after)).toEqual({ events: [], cursor: undefined });
    // Each resource's second event waits until every other resource had its turn, not the first one's order.
    const firstRound = claimed.slice(0, 3).map((x) => x.user);
    expect(new Set(firstRound).size).toBe(3);
    expect(claimed.slice(3).map((x) => x.user)).toEqual(firstRound);
    expect(claimed.map((x) => x.seq)).toEqual([0, 0, 0, 1, 1, 1]);
  });

  it("finds the head of an idle resource behind a long backlog of resources in flight", async () => {
    const webhooks = testWebhooks(database.db, clock, { concurrency: 4, chain: 4 });
    const busy = Array.from({ length: 3 }, () => uuidv7());
    await recordRounds(database.db, webhooks, c.clientId, busy, 20);
    const late = uuidv7();
    await recordEvents(database.db, webhooks, c.clientId, [update(late, 0)]);
    const now = clock.now();
    const lease = { now, leaseUntil: new Date(now.getTime() + TIMEOUT_MS), chain: 4, ...OWNER };
    const inFlight = await claimDue(database.db, { ...lease, limit: 3, claimToken: "busy" });
    expect(new Set(inFlight.events.map((e) => e.orderingKey))).toEqual(new Set(busy));
    const next = await claimDue(database.db, { ...lease, limit: 3, claimToken: "next" });
    expect(next.events.map((e) => e.orderingKey)).toEqual([late]);
    await complete([...inFlight.events, ...next.events]);
    expect(await webhooks.dispatcher.drain()).toBe(3 * 16);
  });
});

describe("durability", () => {
  it("delivers an event committed before a restart, from a new instance on the same database", async () => {
    const before = await createTestApp({ database, clock, webhooks: true });
    const u = uuidv7();
    await recordEvents(database.db, before.webhooks, c.clientId, [update(u, 1)]);
    await before.close(); // the process goes away before its dispatcher ran

    const second = openDatabase({ url: database.url, schema: database.schema, poolSize: 2 });
    try {
      const after = testWebhooks(second.db, clock);
      expect(await after.dispatcher.drain()).toBe(1);
      expect(receiver.received.map((r) => userOf(r.json))).toEqual([u]);
      expect(await outboxCount(database.db)).toBe(0);
    } finally {
      await second.close();
    }
  });

  it("re-sends an event whose claimer died, once the lease expires, with the same webhook-id (at-least-once)", async () => {
    const webhooks = testWebhooks(database.db, clock, { timeoutMs: TIMEOUT_MS });
    const u = uuidv7();
    await recordEvents(database.db, webhooks, c.clientId, [update(u, 1), update(u, 2)]);
    // A dispatcher claims the head, then "crashes" before sending or recording anything.
    const now = clock.now();
    const { events: claimed } = await claimDue(database.db, {
      limit: 10,
      now,
      leaseUntil: new Date(now.getTime() + TIMEOUT_MS + LEASE_MARGIN_MS),
      claimToken: "dead-instance",
      ...OWNER,
    });
    expect(claimed.map((e) => numberOf(JSON.parse(e.body)))).toEqual([1]);

    // While the lease holds, the resource is blocked: neither the head nor the next event goes out.
    expect(await webhooks.dispatcher.drain()).toBe(0);
    clock.advance(TIMEOUT_MS + LEASE_MARGIN_MS + 1);
    expect(await webhooks.dispatcher.drain()).toBe(2);
    expect(receiver.received.map((r) => numberOf(r.json))).toEqual([1, 2]);
    expect(receiver.received[0]?.headers["webhook-id"]).toBe(claimed[0]?.id);
  });

  it("gives an event up after repeated interrupted deliveries of its own instead of crash-looping on it", async () => {
    const webhooks = testWebhooks(database.db, clock, { timeoutMs: TIMEOUT_MS });
    await recordEvents(database.db, webhooks, c.clientId, [update(uuidv7(), 1)]);
    for (let i = 0; i < MAX_INTERRUPTED; i++) {
      const now = clock.now();
      await claimDue(database.db, {
        limit: 1,
        now,
        leaseUntil: new Date(now.getTime() + 1),
        claimToken: `dead-${i}`,
        ...OWNER,
      });
      clock.advance(2);
    }
    expect(await webhooks.dispatcher.drain()).toBe(1);
    expect(receiver.received).toHaveLength(0);
    expect(await outboxCount(database.db)).toBe(0);
  });
});

describe("several dispatchers on one database", () => {
  it("never deliver an event twice, and keep per-resource order", async () => {
    const pools = [0, 1, 2].map(() => openDatabase({ url: database.url, schema: database.schema, poolSize: 4 }));
    try {
      const dispatchers = pools.map((p) => testWebhooks(p.db, clock, { concurrency: 16 }).dispatcher);
      const users = Array.from({ length: 40 }, () => uuidv7());
      const writer = testWebhooks(database.db, clock);
      await recordRounds(database.db, writer, c.clientId, users, 10);
      receiver.answer(() => ({ status: 200, delayMs: Math.floor(Math.random() * 3) }));
      const delivered = [0, 0, 0];
      while ((await outboxCount(database.db)) > 0) {
        const counts = await Promise.all(dispatchers.map((d) => d.drain()));
        counts.forEach((n, i) => {
          delivered[i] = (delivered[i] ?? 0) + n;
        });
      }
      const ids = receiver.received.map((r) => String(r.headers["webhook-id"]));
      expect(ids).toHaveLength(400);
      expect(new Set(ids).size).toBe(400);
      expect(delivered.reduce((a, b) => a + b, 0)).toBe(400);
      const order = arrivalOrder();
      for (const u of users) expect(order.get(u)).toEqual(Array.from({ length: 10 }, (_, i) => i));
    } finally {
      await Promise.all(pools.map((p) => p.close()));
    }
  });

  it("run concurrently as background loops (start/stop) without a duplicate", async () => {
    const pools = [0, 1].map(() => openDatabase({ url: database.url, schema: database.schema, poolSize: 4 }));
    const dispatchers = pools.map((p) => testWebhooks(p.db, clock, { pollIntervalMs: 5 }).dispatcher);
    try {
      for (const d of dispatchers) d.start();
      const writer = testWebhooks(database.db, clock);
      const users = Array.from({ length: 50 }, () => uuidv7());
      for (let seq = 0; seq < 4; seq++) {
        await recordEvents(
          database.db,
          writer,
          c.clientId,
          users.map((u) => update(u, seq)),
        );
        for (const d of dispatchers) d.wake();
      }
      await expect.poll(() => receiver.received.length, { timeout: 10_000, interval: 20 }).toBe(200);
      await Promise.all(dispatchers.map((d) => d.stop()));
      expect(new Set(receiver.received.map((r) => String(r.headers["webhook-id"]))).size).toBe(200);
      for (const u of users) expect(arrivalOrder().get(u)).toEqual([0, 1, 2, 3]);
      expect(await outboxCount(database.db)).toBe(0);
    } finally {
      await Promise.all(dispatchers.map((d) => d.stop()));
      await Promise.all(pools.map((p) => p.close()));
    }
  });
});
