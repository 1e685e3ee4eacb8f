import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createLogger } from "../../src/platform/logger.js";
import { openDatabase } from "../../src/storage/database.js";
import type { EmbeddedCluster } from "../../src/storage/embedded.js";
import { startEmbedded } from "../../src/storage/embedded.js";
import { migrate } from "../../src/storage/migrate.js";
import { createTestApp, type ReceiverApp } from "../helpers/app.js";
import { USER_SCHEMA } from "../helpers/constants.js";
import { activated, scim } from "../helpers/seed.js";
import { kinds } from "../helpers/webhook-receiver.js";

/**
 * What delays a webhook after a failover under `synchronous_mode_strict` (docs/scaling.md): the new primary answers
 * reads at once while every commit waits for the missing standby. A claim is a commit: it waits, the liveness probe
 * sees it waiting and cuts its connection — but the server keeps the commit waiting and lets it through once the
 * standby is back. Until then the claim's rows look unclaimed and are locked, so a release of the lost claim run
 * during the outage finds nothing. The claim then commits, owned by a live dispatcher, with a 32 s lease (the
 * test's webhook timeout + 30 s), and every event of its resource — also one committed after the recovery — must
 * not wait for that lease: it is delivered within 2 s of the standby's return. The clock is frozen, so a lease
 * never runs out here. The bookkeeping commits synchronously here (Roster's own bookkeeping pool does not wait for
 * the standby: webhooks.sync-standby-async.test.ts), the case where a claim's commit is cut while it waits.
 */
const CONNECT_MS = 2_000;
const TIMEOUTS = { connectMs: CONNECT_MS, statementMs: 30_000, idleInTransactionMs: 60_000 };

describe("a webhook claim whose commit waits for a missing synchronous standby", () => {
  let cluster: EmbeddedCluster;
  let main: ReturnType<typeof openDatabase>;
  let bookkeeping: ReturnType<typeof openDatabase>;
  let admin: pg.Client;
  let t: ReceiverApp;

  const standbyNames = async (names: string): Promise<void> => {
    await admin.query(`alter system set synchronous_standby_names = '${names}'`);
    await admin.query("select pg_reload_conf()");
  };
  /** Commits waiting for the standby (of statements that contain `text`). */
  const commitsWaiting = async (text = ""): Promise<number> => {
    const r = await admin.query<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where wait_event = 'SyncRep' and strpos(query, $1) > 0",
      [text],
    );
    return r.rows[0]?.n ?? 0;
  };
  /** A commit of its own connection, once one is seen waiting for the standby: the reload has taken effect. */
  const waitingCommit = async (): Promise<{ client: pg.Client; commit: Promise<unknown> }> => {
    for (let attempt = 0; attempt < 100; attempt++) {
      const client = new pg.Client(cluster.url);
      client.on("error", () => {});
      await client.connect();
      let done = false;
      const commit = client.query("insert into commit_probe values (1)").finally(() => {
        done = true;
      });
      commit.catch(() => {}); // awaited once the standby is back; a failed test leaves it to the cluster's stop
      while (!done) if ((await commitsWaiting()) > 0) return { client, commit };
      await commit;
      await client.end();
    }
    throw new Error("no commit ever waited for the standby");
  };
  /** The outbox rows of the user's events as the server has them: claimed by whom. */
  const outbox = async () =>
    (
      await admin.query<{ event: string; claimed: boolean }>(
        "select event, claim_token is not null as claimed from webhook_outbox order by seq",
      )
    ).rows;

  beforeAll(async () => {
    cluster = await startEmbedded({ dataDir: undefined, logger: createLogger("silent") });
    admin = new pg.Client(cluster.url);
    admin.on("error", () => {});
    await admin.connect();
    await admin.query("create table commit_probe (v int)");
    main = openDatabase({ url: cluster.url, poolSize: 4, timeouts: TIMEOUTS });
    bookkeeping = openDatabase({ url: cluster.url, poolSize: 4, timeouts: TIMEOUTS, pooling: "transaction" });
    await migrate(main.db);
    const database = { url: cluster.url, schema: "public", db: main.db, close: async () => {} };
    t = await createTestApp({ database, receiver: true, webhooks: { bookkeepingDb: bookkeeping.db } });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await bookkeeping?.close();
    await main?.close();
    await admin?.end();
    await cluster?.stop();
  });

  it("is released once the standby is back, and the resource's later events arrive within 2 s", async () => {
    // The connection's own events first (a successful request activates it), so the claims below hold the user's.
    expect((await scim(t, t.client, "GET", "/Users")).statusCode).toBe(200);
    await activated(t, t.client);
    expect(await t.webhooks.dispatcher.drain()).toBe(2);
    expect(kinds(await t.deliver())).toEqual([]);
    const created = await scim(t, t.client, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "sync@x.com" });
    expect(created.statusCode).toBe(201);
    const id = created.json().id as string;

    await standbyNames("absent_standby");
    const probe = await waitingCommit();
    // The liveness probe sees the claim waiting and cuts it within the connect timeout: its answer is lost, and
    // the server still holds it, waiting. (A claim cut before it reached its commit — the probe's last answer
    // stands for 500 ms — left nothing behind: the dispatcher claims again.)
    await vi.waitFor(
      async () => {
        await expect(t.webhooks.dispatcher.runOnce()).rejects.toThrow();
        expect(await commitsWaiting("with recursive k")).toBe(1);
      },
      { timeout: 30_000, interval: 100 },
    );
    expect(t.receiver.received).toHaveLength(0);
    // The outage goes on: the dispatcher's next round settles what it owes (the lost claim, whose rows look free and
    // are locked by the waiting commit) and claims again (the head is locked: nothing).
    // (A round whose connection start-up the probe cut — the database looks down — is tried again.)
    await vi.waitFor(async () => expect(await t.webhooks.dispatcher.runOnce()).toBe(0), {
      timeout: 30_000,
      interval: 100,
    });
    expect(await commitsWaiting("with recursive k")).toBe(1);

    // The standby is back: every waiting commit goes through, the cut claim's too.
    await standbyNames("");
    await vi.waitFor(async () => expect(await commitsWaiting()).toBe(0), { timeout: 10_000, interval: 20 });
    await probe.commit;
    await probe.client.end();
    const recovered = performance.now();
    expect(await outbox()).toEqual([{ event: "user.created", claimed: true }]);

    const patched = await scim(t, t.client, "PATCH", `/Users/${id}`, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "replace", path: "nickName", value: "after" }],
    });
    expect(patched.statusCode).toBe(200);
    t.webhooks.dispatcher.start();
    await vi.waitFor(() => expect(t.receiver.received).toHaveLength(2), { timeout: 10_000, interval: 20 });
    const ms = Math.round(performance.now() - recovered);
    process.stdout.write(`both events delivered ${ms} ms after the standby came back\n`);
    expect(ms).toBeLessThan(2_000);
    expect(t.receiver.received.map((r) => (r.json as { event: string }).event)).toEqual([
      "user.created",
      "user.updated",
    ]);
    await t.webhooks.dispatcher.stop();
    expect(await outbox()).toEqual([]);
  }, 60_000);
});
