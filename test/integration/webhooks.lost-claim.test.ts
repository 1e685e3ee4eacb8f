import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryId,
  RootOperationNode,
} from "kysely";
import type { QueryResult, UnknownRow } from "kysely";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestApp, createTestDatabase, type ReceiverApp, type TestDatabase } from "../helpers/app.js";
import { activated, scim } from "../helpers/seed.js";
import { kinds } from "../helpers/webhook-receiver.js";
import { USER_SCHEMA } from "../helpers/constants.js";

/**
 * A claim that commits while its answer is lost — the connection cut between the commit and the rows reaching
 * Roster, as a terminated backend or a reset does — must not leave its events waiting out their lease: the
 * dispatcher releases what that claim took and delivers it on its next round. The clock does not move here, so a
 * lease could never expire.
 */
class LoseNextClaimAnswer implements KyselyPlugin {
  armed = false;
  readonly #claims = new WeakSet<QueryId>();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node as { kind: string; sqlFragments?: readonly string[] };
    if (node.kind === "RawNode" && node.sqlFragments?.join("").includes("claim_token ="))
      this.#claims.add(args.queryId);
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.armed && this.#claims.has(args.queryId)) {
      this.armed = false;
      throw new Error("Connection terminated unexpectedly");
    }
    return args.result;
  }
}

const losing = new LoseNextClaimAnswer();
let database: TestDatabase;
let e2e: ReceiverApp;

beforeAll(async () => {
  database = await createTestDatabase();
  e2e = await createTestApp({ receiver: true, database, webhooks: { bookkeepingDb: database.db.withPlugin(losing) } });
});

afterAll(async () => {
  await e2e.close();
  await database.close();
});

describe("a claim whose answer was lost", () => {
  it("is released and its events delivered on the next round, not after the lease", async () => {
    const created = await scim(e2e, e2e.client, "POST", "/Users", {
      schemas: [USER_SCHEMA],
      userName: "lost-claim@example.com",
    });
    expect(created.statusCode).toBe(201);

    losing.armed = true;
    await expect(e2e.webhooks.dispatcher.runOnce()).rejects.toThrow("Connection terminated unexpectedly");
    expect(losing.armed).toBe(false);
    expect(e2e.receiver.received).toHaveLength(0);

    expect(kinds(await e2e.deliver())).toEqual(["user.created"]);
  });
});

/**
 * The database away while a delivery's bookkeeping is written: the attempt was answered but not recorded, the
 * events claimed behind it neither sent nor released. Their owner is alive, so nobody takes them over; they must
 * be settled as soon as the database answers again, not after the lease (which a frozen clock never ends).
 */
class DatabaseAway implements KyselyPlugin {
  /** `bookkeeping`: the delivery records and releases fail; `all`: every statement fails (claims, heartbeats). */
  mode: "none" | "bookkeeping" | "all" = "none";
  failures = 0;

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node as { kind: string; sqlFragments?: readonly string[] };
    const text = node.kind === "RawNode" ? (node.sqlFragments?.join("") ?? "") : "";
    const bookkeeping = text.includes("with done as") || text.includes("set claimed_until = null");
    if (this.mode === "all" || (this.mode === "bookkeeping" && bookkeeping)) {
      this.failures++;
      throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    }
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

const nick = (app: ReceiverApp, id: string, value: string) =>
  scim(app, app.client, "PATCH", `/Users/${id}`, {
    schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
    Operations: [{ op: "replace", path: "nickName", value }],
  });

/**
 * An app of its own whose bookkeeping statements go through `away`, with its connection's own events delivered (a
 * successful request activates it), so that what a test claims next is the directory's.
 */
function useAwayApp(): { readonly away: DatabaseAway; readonly app: ReceiverApp } {
  const away = new DatabaseAway();
  let db: TestDatabase;
  let app: ReceiverApp | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
    app = await createTestApp({ receiver: true, database: db, webhooks: { bookkeepingDb: db.db.withPlugin(away) } });
    expect((await scim(app, app.client, "GET", "/Users")).statusCode).toBe(200);
    await activated(app, app.client);
    expect(await app.webhooks.dispatcher.drain()).toBe(2);
  });
  afterAll(async () => {
    away.mode = "none";
    await app?.close();
    await db.close();
  });
  return {
    away,
    get app() {
      if (app === undefined) throw new Error("the suite has not started");
      return app;
    },
  };
}

describe("bookkeeping that failed while the database was away", () => {
  const suite = useAwayApp();
  const away = suite.away;
  let app: ReceiverApp;
  beforeAll(() => {
    app = suite.app;
  });

  it("is written once the database answers: the answered event is not sent again, the rest are delivered", async () => {
    expect(kinds(await app.deliver())).toEqual([]);
    const created = await scim(app, app.client, "POST", "/Users", {
      schemas: [USER_SCHEMA],
      userName: "away@example.com",
    });
    expect(created.statusCode).toBe(201);
    const id = created.json().id as string;
    expect((await nick(app, id, "one")).statusCode).toBe(200);

    // Claims the user's two events; the first is sent, its record fails, the second is neither sent nor released.
    away.mode = "bookkeeping";
    expect(await app.webhooks.dispatcher.runOnce()).toBe(2);
    expect(away.failures).toBe(2);
    expect(app.receiver.received.map((r) => (r.json as { event: string }).event)).toEqual(["user.created"]);

    away.mode = "none";
    expect((await nick(app, id, "two")).statusCode).toBe(200);
    // Recorded, not sent again: the user.created arrived once in all.
    const all = await app.deliver();
    expect(kinds(all)).toEqual(["user.created", "user.updated", "user.updated"]);
    expect(all.slice(1).map((d) => (d.body.data as { raw: { nickName: string } }).raw.nickName)).toEqual([
      "one",
      "two",
    ]);
  });

  it("with the running dispatcher: an event committed after the outage arrives within 2 s of its end", async () => {
    app.webhooks.dispatcher.start();
    const failuresBefore = away.failures;
    away.mode = "bookkeeping";
    const created = await scim(app, app.client, "POST", "/Users", {
      schemas: [USER_SCHEMA],
      userName: "outage@example.com",
    });
    const id = created.json().id as string;
    await vi.waitFor(() => expect(away.failures).toBeGreaterThan(failuresBefore), { timeout: 10_000 });
    // The outage goes on: claims and heartbeats fail too.
    away.mode = "all";
    await vi.waitFor(() => expect(away.failures).toBeGreaterThan(failuresBefore + 2), { timeout: 10_000 });

    away.mode = "none";
    const recovered = Date.now();
    expect((await nick(app, id, "after")).statusCode).toBe(200);
    await vi.waitFor(
      () =>
        expect(
          app.receiver.received.some(
            (r) => (r.json as { data?: { raw?: { nickName?: string } } }).data?.raw?.nickName === "after",
          ),
        ).toBe(true),
      { timeout: 10_000, interval: 20 },
    );
    const ms = Date.now() - recovered;
    process.stdout.write(`delivered ${ms} ms after the database answered again\n`);
    expect(ms).toBeLessThan(2_000);
    await app.webhooks.dispatcher.stop();
  });
});

describe("a claim that failed in an outage", () => {
  const away = new DatabaseAway();
  let db: TestDatabase;
  let app: ReceiverApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    // A poll interval far beyond the bound below: only a commit's wake-up can bring the next claim in time.
    app = await createTestApp({
      receiver: true,
      database: db,
      webhooks: { bookkeepingDb: db.db.withPlugin(away), pollIntervalMs: 30_000 },
    });
  });

  afterAll(async () => {
    away.mode = "none";
    await app.close();
    await db.close();
  });

  it("is tried again as soon as a write commits, not after the poll interval", async () => {
    app.webhooks.dispatcher.start();
    away.mode = "all";
    const created = await scim(app, app.client, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "w@x.com" });
    expect(created.statusCode).toBe(201);
    // The write's wake-up: its claim fails, and the dispatcher waits.
    await vi.waitFor(() => expect(away.failures).toBeGreaterThan(0), { timeout: 10_000, interval: 20 });
    expect(app.receiver.received).toHaveLength(0);

    away.mode = "none";
    const recovered = Date.now();
    expect((await nick(app, created.json().id as string, "back")).statusCode).toBe(200);
    const events = () => app.receiver.received.map((r) => (r.json as { event: string }).event);
    await vi.waitFor(() => expect(events()).toEqual(["user.created", "user.updated"]), {
      timeout: 10_000,
      interval: 20,
    });
    const ms = Date.now() - recovered;
    process.stdout.write(`delivered ${ms} ms after the database answered again (poll interval 30 s)\n`);
    expect(ms).toBeLessThan(2_000);
    await app.webhooks.dispatcher.stop();
  });
});

/**
 * A failover may lose the old primary's last bookkeeping commits (they do not wait for the standby): on the new
 * primary, rows this dispatcher already delivered and recorded are claimed again under a token it settled and forgot.
 * Its heartbeat goes on, so nobody takes them over: once the database answers after the outage, it releases every
 * row claimed under its id that no chain of its holds, and they go out at once, not after the lease.
 */
describe("rows claimed under this dispatcher's id by a claim it no longer holds", () => {
  const suite = useAwayApp();
  const away = suite.away;
  let app: ReceiverApp;
  beforeAll(() => {
    app = suite.app;
  });

  it("are released once the database answers after an outage, and delivered on that round", async () => {
    const created = await scim(app, app.client, "POST", "/Users", {
      schemas: [USER_SCHEMA],
      userName: "forgotten-claim@example.com",
    });
    expect(created.statusCode).toBe(201);
    // The state a failover leaves: the row claimed under this live dispatcher's id, by a token it no longer holds.
    await sql`update webhook_outbox set claim_token = 'forgotten', claimed_by = ${app.webhooks.dispatcher.id}::uuid,
      claimed_until = now() + interval '1 hour'`.execute(app.db);
    expect(await app.webhooks.dispatcher.runOnce()).toBe(0);
    expect(app.receiver.received).toHaveLength(0);

    away.mode = "all";
    await expect(app.webhooks.dispatcher.runOnce()).rejects.toThrow("ECONNREFUSED");
    away.mode = "none";
    expect(kinds(await app.deliver())).toEqual(["user.created"]);
  });
});
