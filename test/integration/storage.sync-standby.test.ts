import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/platform/logger.js";
import { openDatabase } from "../../src/storage/database.js";
import type { EmbeddedCluster } from "../../src/storage/embedded.js";
import { startEmbedded } from "../../src/storage/embedded.js";
import { migrate } from "../../src/storage/migrate.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { USER_SCHEMA } from "../helpers/constants.js";
import { type SeededClient, scim, seedClient } from "../helpers/seed.js";

/**
 * A primary that answers every read at once while each commit waits for a synchronous standby that is not there
 * (Patroni's `synchronous_mode_strict` between a failover and the old primary's return) must not hold a write until
 * the standby comes back: the write answers 503 with Retry-After within ROSTER_DATABASE_CONNECT_TIMEOUT_MS, and
 * once commits go through again, so do writes. The cluster is the test's own: its standby setting is the server's.
 */
const CONNECT_MS = 2_000;
const TIMEOUTS = { connectMs: CONNECT_MS, statementMs: 30_000, idleInTransactionMs: 60_000 };

describe("a primary whose commits wait for a missing synchronous standby", () => {
  let cluster: EmbeddedCluster;
  let opened: ReturnType<typeof openDatabase>;
  let admin: pg.Client;
  let t: TestApp;
  let c: SeededClient;

  /** Sets the server's standby list (the reload reaches the server's processes asynchronously). */
  const standbyNames = async (names: string): Promise<void> => {
    await admin.query(`alter system set synchronous_standby_names = '${names}'`);
    await admin.query("select pg_reload_conf()");
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
      while (!done) {
        const seen = await admin.query<{ waits: boolean }>(
          "select exists (select 1 from pg_stat_activity where wait_event = 'SyncRep') as waits",
        );
        if (seen.rows[0]?.waits === true) return { client, commit };
      }
      await commit;
      await client.end();
    }
    throw new Error("no commit ever waited for the standby");
  };

  beforeAll(async () => {
    cluster = await startEmbedded({ dataDir: undefined, logger: createLogger("silent") });
    admin = new pg.Client(cluster.url);
    admin.on("error", () => {});
    await admin.connect();
    await admin.query("create table commit_probe (v int)");
    opened = openDatabase({ url: cluster.url, poolSize: 4, timeouts: TIMEOUTS });
    await migrate(opened.db);
    t = await createTestApp({ database: { url: cluster.url, schema: "public", db: opened.db, close: async () => {} } });
    c = await seedClient(t);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await opened?.close();
    await admin?.end();
    await cluster?.stop();
  });

  it("answers a write 503 within the connect timeout, then writes again once commits go through", async () => {
    await standbyNames("absent_standby");
    const waiting = await waitingCommit();
    try {
      for (const round of [1, 2]) {
        const started = performance.now();
        const res = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: `stuck-${round}@x.com` });
        const ms = Math.round(performance.now() - started);
        process.stdout.write(`round ${round}: SCIM write answered ${res.statusCode} in ${ms} ms\n`);
        expect(res.statusCode).toBe(503);
        expect(res.headers["retry-after"]).toBeDefined();
        expect(ms).toBeLessThan(CONNECT_MS);
      }
    } finally {
      await standbyNames("");
      // Every waiting commit goes through once no standby is required: the one seen waiting shows it.
      await waiting.commit;
      await waiting.client.end();
    }
    const res = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "after@x.com" });
    expect(res.statusCode).toBe(201);
  }, 30_000);
});
