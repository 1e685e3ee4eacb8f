import type pg from "pg";
import type { Config } from "../config.js";
import type { Logger } from "../platform/logger.js";
import { type DataDirLock, lockDataDir } from "./data-dir-lock.js";
import { checkPoolerSession, type Db, type OpenDatabase, openDatabase } from "./database.js";
import { migrate } from "./migrate.js";
import { type EmbeddedCluster, startEmbedded } from "./embedded.js";
import { DatabaseLiveness } from "./liveness.js";
import type { DatabaseTimeouts } from "./timeouts.js";

/** Connections of the webhook dispatcher's bookkeeping (claims, attempts): few, and `synchronous_commit = off`. */
export const BOOKKEEPING_POOL_SIZE = 4;
/** Connections for the hot SCIM reads (GET and list of users), with generic plans (DatabaseOptions.genericPlans). */
export const READS_POOL_SIZE = 10;
/** Connections for everything else: writes, transactions, admin API. */
export const MAIN_POOL_SIZE = 10;

export interface Storage extends OpenDatabase {
  /** The same database without synchronous commit: only for the webhook dispatcher's bookkeeping. */
  readonly bookkeeping: Db;
  /** The same database with generic plans: only for the hot reads (AppDeps.reads). */
  readonly reads: Db;
  readonly engine: "embedded" | "server";
  /** Every pool by name, for their connection counts on /metrics. */
  readonly pools: Readonly<Record<string, pg.Pool>>;
  /** A shutdown has begun: the embedded cluster's exit from now on is expected, not a crash to recover from. */
  prepareToStop(): void;
}

export interface StorageHooks {
  /** The embedded cluster died and could not be restarted (embedded.ts): the process cannot go on. */
  readonly onEmbeddedGone?: (error: Error) => void;
}

/** Opens PostgreSQL — the embedded cluster or an existing server, same code and SQL — and migrates it. */
export async function openStorage(config: Config, logger: Logger, hooks: StorageHooks = {}): Promise<Storage> {
  let cluster: EmbeddedCluster | undefined;
  let url: string;
  let lock: DataDirLock | undefined;
  const pooling = config.database.kind === "server" ? config.database.pooling : "session";
  if (config.database.kind === "server") url = config.database.url;
  else {
    const persistent = config.database.persistent;
    // Before anything in the directory is touched: a second Roster must not take the first one's cluster over.
    if (persistent) lock = lockDataDir(config.dataDir, logger);
    try {
      cluster = await startEmbedded({
        dataDir: persistent ? config.dataDir : undefined,
        logger,
        onGiveUp: hooks.onEmbeddedGone,
      });
    } catch (e) {
      lock?.release();
      throw e;
    }
    url = cluster.url;
  }
  try {
    const timeouts = config.databaseTimeouts;
    const dbLog = logger.child({ component: "database" });
    // Reported a moment later: Ctrl-C reaches the embedded PostgreSQL in the same instant as Roster, and its
    // connections may break before Roster's own signal handler runs; the shutdown then demotes the line (the logger
    // is the demotable one). A real outage is reported all the same, 100 ms on.
    const onConnectionError = (e: Error) => {
      const message = e.message;
      setTimeout(() => dbLog.warn({ err: message }, "a pooled database connection broke"), 100).unref();
    };
    // One probe of the database for all its pools: an outage is found once, and felt by every pool at once.
    const liveness = new DatabaseLiveness(url, timeouts.connectMs);
    const pools = { url, timeouts, onConnectionError, pooling, liveness };
    await migrateUnbounded(pools);
    const opened = openDatabase({ ...pools, poolSize: MAIN_POOL_SIZE });
    const bookkeeping = openDatabase({ ...pools, poolSize: BOOKKEEPING_POOL_SIZE, synchronousCommit: false });
    const reads = openDatabase({ ...pools, poolSize: READS_POOL_SIZE, genericPlans: true });
    return {
      ...opened,
      bookkeeping: bookkeeping.db,
      reads: reads.db,
      engine: cluster === undefined ? "server" : "embedded",
      pools: { main: opened.pool, reads: reads.pool, bookkeeping: bookkeeping.pool },
      prepareToStop: () => cluster?.prepareToStop(),
      async close() {
        cluster?.prepareToStop();
        await reads.close();
        await bookkeeping.close();
        await opened.close();
        await cluster?.stop();
        lock?.release();
      },
    };
  } catch (e) {
    await cluster?.stop();
    lock?.release();
    throw e;
  }
}

/**
 * Migrations may build an index on a large table: their own connection, without the statement bounds. Nor are its
 * statements watched (liveness.ts): an instance waiting for another's migrations holds the lock's queue, and behind
 * a pooler with few server connections a probe would wait in its queue too and take that for an outage. Behind a
 * transaction pooler the server's DateStyle is checked first (checkPoolerSession).
 */
async function migrateUnbounded(target: {
  url: string;
  timeouts: DatabaseTimeouts;
  pooling: "session" | "transaction";
}): Promise<void> {
  const migrating = openDatabase({
    url: target.url,
    pooling: target.pooling,
    poolSize: 2,
    timeouts: { ...target.timeouts, statementMs: 0, idleInTransactionMs: 0 },
    liveness: new DatabaseLiveness(target.url, 0),
  });
  try {
    if (target.pooling === "transaction") await checkPoolerSession(migrating.db);
    await migrate(migrating.db);
  } finally {
    await migrating.close();
  }
}
