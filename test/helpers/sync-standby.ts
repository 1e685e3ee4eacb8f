import pg from "pg";
import { createLogger } from "../../src/platform/logger.js";
import { type DatabaseOptions, type OpenDatabase, openDatabase } from "../../src/storage/database.js";
import { startEmbedded } from "../../src/storage/embedded.js";
import { migrate } from "../../src/storage/migrate.js";
import type { TestDatabase } from "./database.js";

/** Timeouts of the pools these tests open: a cut within 2 s, nothing else in the way. */
export const STANDBY_TIMEOUTS = { connectMs: 2_000, statementMs: 30_000, idleInTransactionMs: 60_000 };

/**
 * A migrated PostgreSQL of the test's own whose commits can be made to wait for a synchronous standby that is not
 * there (Patroni's `synchronous_mode_strict` between a failover and the old primary's return): the standby setting
 * is the server's, so no other test file may share it.
 */
export interface StandbyServer {
  /** The app's database: a session-mode pool of 4 with STANDBY_TIMEOUTS. */
  readonly database: TestDatabase;
  /** A connection of the test's own, outside every pool. */
  readonly admin: pg.Client;
  /** Another pool of the server, closed with it. */
  open(options: Omit<DatabaseOptions, "url">): OpenDatabase;
  /** Sets the server's standby list (the reload reaches the server's processes asynchronously). */
  standbyNames(names: string): Promise<void>;
  /** Commits waiting for the standby (of statements that contain `text`). */
  commitsWaiting(text?: string): Promise<number>;
  /** A commit of its own connection, once one is seen waiting for the standby: the reload has taken effect. */
  waitingCommit(): Promise<{ client: pg.Client; commit: Promise<unknown> }>;
  stop(): Promise<void>;
}

export async function startStandbyServer(): Promise<StandbyServer> {
  const cluster = await startEmbedded({ dataDir: undefined, logger: createLogger("silent") });
  const admin = new pg.Client(cluster.url);
  admin.on("error", () => {});
  await admin.connect();
  await admin.query("create table commit_probe (v int)");
  const pools: OpenDatabase[] = [];
  const open = (options: Omit<DatabaseOptions, "url">): OpenDatabase => {
    const opened = openDatabase({ url: cluster.url, ...options });
    pools.push(opened);
    return opened;
  };
  const main = open({ poolSize: 4, timeouts: STANDBY_TIMEOUTS });
  await migrate(main.db);
  const commitsWaiting = async (text = ""): Promise<number> => {
    const r = await admin.query<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where wait_event = 'SyncRep' and strpos(query, $1) > 0",
      [text],
    );
    return r.rows[0]?.n ?? 0;
  };
  return {
    database: { url: cluster.url, schema: "public", db: main.db, close: async () => {} },
    admin,
    open,
    async standbyNames(names) {
      await admin.query(`alter system set synchronous_standby_names = '${names}'`);
      await admin.query("select pg_reload_conf()");
    },
    commitsWaiting,
    async waitingCommit() {
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
    },
    async stop() {
      for (const pool of pools.reverse()) await pool.close();
      await admin.end();
      await cluster.stop();
    },
  };
}
