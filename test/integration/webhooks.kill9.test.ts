import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INTERRUPTED_ERROR } from "../../src/webhooks/outbox-repo.js";
import { createServerDatabase, type ServerDatabase } from "../helpers/database.js";
import { call, type RosterProcess, startRosterProcess } from "../helpers/roster-process.js";
import {
  checkedDelivery,
  type ReceivedWebhook,
  startWebhookReceiver,
  type WebhookReceiver,
} from "../helpers/webhook-receiver.js";
import { ADMIN_TOKEN, PATCH_OP, USER_SCHEMA, WEBHOOK_SECRET } from "../helpers/constants.js";

// Roster as a child process on a database of its own, killed with SIGKILL while webhooks are being delivered, then
// started again: every committed event must reach the receiver, in order per resource. A re-send is allowed only
// for an attempt the kill interrupted (the documented crash window); such repeats are counted.

/** Heartbeat every 200 ms: a killed instance's claims are taken over 1 s after its last beat. */
const ENV = { ROSTER_WEBHOOK_HEARTBEAT_MS: "200", ROSTER_WEBHOOK_TIMEOUT_MS: "30000" };
const DELIVERY_DEADLINE_MS = 20_000;

let database: ServerDatabase;
let receiver: WebhookReceiver;
let roster: RosterProcess | undefined;

beforeAll(async () => {
  database = await createServerDatabase();
  receiver = await startWebhookReceiver();
  await start();
});
afterAll(async () => {
  await roster?.stop();
  await receiver.close();
  await database.drop();
});

const start = async () => {
  roster = await startRosterProcess(database.url, ENV);
  return roster;
};
const current = (): RosterProcess => {
  if (roster === undefined) throw new Error("Roster is not running");
  return roster;
};
const admin = (method: string, path: string, body?: unknown) =>
  call(current().url, method, `/v2alpha1/admin${path}`, ADMIN_TOKEN, body);

interface Connection {
  readonly clientId: string;
  readonly secret: string;
}

async function connection(): Promise<Connection> {
  const org = await admin("POST", "/organizations", { name: "Kill" });
  expect(org.status).toBe(201);
  const secret = `scim-${Math.random().toString(36).slice(2)}-secret`;
  const client = await admin("POST", "/scimClients", {
    organization_id: org.json.id,
    secret,
    webhook: { url: receiver.url, secret: WEBHOOK_SECRET },
    log_webhook_events: true,
  });
  expect(client.status).toBe(201);
  return { clientId: String(client.json.client_id), secret };
}

const scimCall = (c: Connection, method: string, path: string, body?: unknown) =>
  call(current().url, method, `/scim/${c.clientId}/v2${path}`, c.secret, body);

const createUser = async (c: Connection, userName: string): Promise<string> => {
  const res = await scimCall(c, "POST", "/Users", {
    schemas: [USER_SCHEMA],
    userName,
    nickName: "0",
  });
  expect(res.status).toBe(201);
  return String(res.json.id);
};
const nick = async (c: Connection, id: string, n: number) => {
  const res = await scimCall(c, "PATCH", `/Users/${id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: "replace", path: "nickName", value: String(n) }],
  });
  expect(res.status).toBe(200);
};

/** The receiver holds every answer until the returned function is called: the backlog builds up meanwhile. */
function holdAnswers(): () => void {
  let open: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  receiver.answer(() => ({ status: 200, after: gate }));
  return () => {
    open();
    receiver.answer(() => ({ status: 200, delayMs: 10 }));
  };
}

/** SIGKILL the running Roster the moment the receiver gets its `n`-th request (before answering it). */
function killOnArrival(n: number): Promise<void> {
  const victim = current();
  return new Promise<void>((killed) => {
    receiver.answer(() => {
      if (receiver.received.length >= n) {
        process.kill(victim.pid, "SIGKILL");
        receiver.answer(() => ({ status: 200, delayMs: 10 }));
        killed();
      }
      return { status: 200, delayMs: 10 };
    });
  });
}

async function untilDelivered(count: (ds: ReceivedWebhook[]) => number, expected: number): Promise<void> {
  const deadline = Date.now() + DELIVERY_DEADLINE_MS;
  while (count(receiver.received) < expected) {
    if (Date.now() > deadline) {
      throw new Error(
        `${count(receiver.received)} of ${expected} events after ${DELIVERY_DEADLINE_MS} ms\n${current().tail()}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

const uniqueIds = (ds: readonly ReceivedWebhook[]) => new Set(ds.map((d) => String(d.headers["webhook-id"]))).size;
const userOf = (d: ReceivedWebhook) => (d.json.data as { id: string }).id;
const nickOf = (d: ReceivedWebhook) => Number((d.json.data as { raw: { nickName: string } }).raw.nickName);

/**
 * The outbox rows left once the dispatcher has caught up: a row goes after its delivery's answer is read, so the
 * receiver may hold the last events a moment before their rows are gone. Waits (bounded) for none to be left.
 */
async function outboxRowsSettled(): Promise<number> {
  const deadline = Date.now() + DELIVERY_DEADLINE_MS;
  let rows = await outboxRows();
  while (rows > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    rows = await outboxRows();
  }
  return rows;
}

async function outboxRows(): Promise<number> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return Number((await client.query("select count(*)::int as n from webhook_outbox")).rows[0].n);
  } finally {
    await client.end();
  }
}

async function interruptedIds(c: Connection): Promise<Set<string>> {
  const log = await admin("GET", `/scimClients/${c.clientId}/webhookEvents?page_size=1000`);
  expect(log.status).toBe(200);
  const entries = log.json.webhook_events as { event_id: string; error: string | null }[];
  expect(entries.filter((e) => e.error?.startsWith("given up"))).toEqual([]);
  return new Set(entries.filter((e) => e.error === INTERRUPTED_ERROR).map((e) => e.event_id));
}

describe("webhook delivery when Roster is killed with SIGKILL", () => {
  it("five kills in a row during a 60-event backlog of one user: every event delivered, in order", async () => {
    receiver.reset();
    const c = await connection();
    const open = holdAnswers();
    const id = await createUser(c, "kill9-backlog@example.com");
    for (let n = 1; n < 60; n++) await nick(c, id, n);
    open();

    const kills = 5;
    for (let k = 0; k < kills; k++) {
      await killOnArrival(receiver.received.length + 6);
      await current().kill9();
      await start();
    }
    await untilDelivered(uniqueIds, 60);
    for (const r of receiver.received) checkedDelivery(r);

    const arrivals = receiver.received.map(nickOf);
    expect([...new Set(arrivals)]).toEqual(Array.from({ length: 60 }, (_, i) => i));
    // A repeat is always the attempt a kill interrupted, sent again at once by the next instance.
    const repeats = arrivals.filter((n, i) => i > 0 && arrivals[i - 1] === n).length;
    expect(arrivals.length).toBe(60 + repeats);
    expect(repeats).toBe(kills);
    expect((await interruptedIds(c)).size).toBe(kills);
    expect(await outboxRowsSettled()).toBe(0);
    console.log(`kill -9 ×${kills} during a 60-event backlog: 60 of 60 delivered in order, ${repeats} re-sent`);
  }, 60_000);

  it("a kill during a burst over many users: every committed event reaches the receiver", async () => {
    receiver.reset();
    const c = await connection();
    const open = holdAnswers();
    const users = 40;
    const perUser = 5;
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let u = w; u < users; u += 8) {
          const id = await createUser(c, `burst-${u}@example.com`);
          for (let n = 1; n < perUser; n++) await nick(c, id, n);
        }
      }),
    );
    open();
    await killOnArrival(60);
    await current().kill9();
    await start();
    const total = users * perUser;
    await untilDelivered(uniqueIds, total);

    // Per user: the first arrivals are in commit order; repeats are only of interrupted attempts.
    const firstSeen = new Map<string, number[]>();
    const seen = new Set<string>();
    const repeated = new Set<string>();
    for (const r of receiver.received) {
      const webhookId = String(r.headers["webhook-id"]);
      if (seen.has(webhookId)) {
        repeated.add(webhookId);
        continue;
      }
      seen.add(webhookId);
      firstSeen.set(userOf(r), [...(firstSeen.get(userOf(r)) ?? []), nickOf(r)]);
    }
    expect(firstSeen.size).toBe(users);
    for (const order of firstSeen.values()) expect(order).toEqual([0, 1, 2, 3, 4]);
    const interrupted = await interruptedIds(c);
    for (const webhookId of repeated) expect(interrupted.has(webhookId)).toBe(true);
    expect(await outboxRowsSettled()).toBe(0);
    console.log(
      `kill -9 during a ${total}-event burst over ${users} users: ${seen.size} of ${total} delivered, ` +
        `${receiver.received.length - seen.size} re-sent (${interrupted.size} attempts interrupted)`,
    );
  }, 60_000);
});
