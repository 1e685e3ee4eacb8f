import type pg from "pg";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type ReceiverApp, type WithObservability } from "../helpers/app.js";
import { USER_SCHEMA } from "../helpers/constants.js";
import { activated, scim } from "../helpers/seed.js";
import { kinds } from "../helpers/webhook-receiver.js";
import { STANDBY_TIMEOUTS, type StandbyServer, startStandbyServer } from "../helpers/sync-standby.js";

/**
 * The bookkeeping pool behind a transaction pooler (the failover lab's shape, docs/scaling.md): while every commit
 * of the server waits for a missing synchronous standby, the dispatcher's heartbeats, claims and attempts and the
 * request log's batches commit with `synchronous_commit = off` set local to their transactions, so they do not
 * wait, and dispatcher rounds leave no commit behind waiting (each such commit holds a server connection). A
 * synchronous pool of the same server, also in transaction mode, shows what they would do otherwise.
 */
const ROUNDS = 10;

describe("background writes while commits wait for a missing synchronous standby", () => {
  let server: StandbyServer;
  let admin: pg.Client;
  let synchronous: ReturnType<StandbyServer["open"]>;
  let t: ReceiverApp & WithObservability;
  const commitsWaiting = () => server.commitsWaiting();
  const standbyNames = (names: string) => server.standbyNames(names);
  const count = async (table: string): Promise<number> =>
    (await admin.query<{ n: number }>(`select count(*)::int as n from ${table}`)).rows[0]?.n ?? 0;

  beforeAll(async () => {
    server = await startStandbyServer();
    admin = server.admin;
    const pooled = { poolSize: 4, timeouts: STANDBY_TIMEOUTS, pooling: "transaction" as const };
    const bookkeeping = server.open({ ...pooled, synchronousCommit: false });
    synchronous = server.open(pooled);
    t = await createTestApp({
      database: server.database,
      receiver: true,
      observed: { writerDb: bookkeeping.db, requestLog: { flushIntervalMs: 3_600_000 } },
      webhooks: { bookkeepingDb: bookkeeping.db },
    });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await server?.stop();
  });

  it("commit bookkeeping and request-log batches at once, leaving no commit waiting", async () => {
    expect((await scim(t, t.client, "GET", "/Users")).statusCode).toBe(200);
    await activated(t, t.client);
    expect(await t.webhooks.dispatcher.drain()).toBe(2);
    expect(kinds(await t.deliver())).toEqual([]);
    const created = await scim(t, t.client, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "async@x.com" });
    expect(created.statusCode).toBe(201);
    await t.obs.writer.flush();
    const logged = await count("scim_request_log");
    // A failed request (kept by the request log) left in the writer's buffer (its timer never fires here) for a
    // batch during the outage.
    const missing = await scim(t, t.client, "GET", "/Users/00000000-0000-4000-8000-000000000000");
    expect(missing.statusCode).toBe(404);
    expect(await count("scim_request_log")).toBe(logged);

    await standbyNames("absent_standby");
    // A synchronous commit waits (once the reload has taken effect) until the liveness probe cuts it; the server
    // keeps it waiting, holding its connection.
    let before = 0;
    for (let attempt = 0; attempt < 100 && before === 0; attempt++) {
      await expect(sql`insert into commit_probe values (1)`.execute(synchronous.db)).rejects.toThrow();
      before = await commitsWaiting();
    }
    expect(before).toBeGreaterThan(0);

    // The dispatcher's rounds: heartbeat, claim, delivery, its attempt and the outbox row's removal — all committed.
    const started = performance.now();
    expect(await t.webhooks.dispatcher.drain()).toBe(1);
    for (let round = 0; round < ROUNDS; round++) expect(await t.webhooks.dispatcher.runOnce()).toBe(0);
    // The request log's batch of the failed request above, with its hourly counts.
    await t.obs.writer.flush();
    const ms = Math.round(performance.now() - started);
    process.stdout.write(`${ROUNDS + 1} dispatcher rounds and a request-log flush took ${ms} ms, no standby\n`);
    expect(t.receiver.received.map((r) => (r.json as { event: string }).event)).toEqual(["user.created"]);
    expect(await count("webhook_outbox")).toBe(0);
    expect(await count("webhook_dispatchers")).toBe(1);
    expect(await count("scim_request_log")).toBeGreaterThan(logged);
    expect(await commitsWaiting()).toBe(before);

    await standbyNames("");
    const deadline = performance.now() + 10_000;
    while ((await commitsWaiting()) > 0 && performance.now() < deadline) await admin.query("select 1");
    expect(await commitsWaiting()).toBe(0);
  }, 60_000);
});
