import { Kysely, sql } from "kysely";
import pg from "pg";
import { DatabaseLiveness, watchedClient } from "./liveness.js";
import { namingDialect } from "./driver.js";
import { runDirectly } from "./prepared.js";
import type { Database } from "./schema.js";
import { quoteIdent } from "./quote.js";
import { DEFAULT_DATABASE_TIMEOUTS, type DatabaseTimeouts } from "./timeouts.js";

export type Db = Kysely<Database>;

export interface DatabaseOptions {
  readonly url: string;
  /** A schema to work in (tests use a fresh one per file); default: the server's search_path. */
  readonly schema?: string | undefined;
  readonly poolSize?: number | undefined;
  /**
   * `false`: every session runs with `synchronous_commit = off` (behind a transaction pooler: every transaction, set
   * local to it, driver.ts) — a commit returns before its WAL is flushed or reaches a synchronous standby, so a crash
   * or failover may lose the last few hundred milliseconds of commits (never corrupting anything). Only for writes
   * whose loss is harmless: the webhook dispatcher's bookkeeping and the request log's batches (docs/webhooks.md).
   * Never for SCIM changes or their outbox rows. Default: synchronous.
   */
  readonly synchronousCommit?: boolean | undefined;
  /**
   * `true`: every session runs with `plan_cache_mode = force_generic_plan` — a named prepared statement is planned
   * once per connection, never per execution. Only for the pool of hot reads (open.ts READS_POOL_SIZE), whose
   * statements are all named, organization-scoped and served by a composite index whatever the organization's size:
   * PostgreSQL's own choice kept re-planning a list page (0.7 ms of planning against ~1 ms of execution) because
   * a generic plan cannot know its OFFSET. Never for the main pool: there unnamed statements would be planned
   * without their values too.
   */
  readonly genericPlans?: boolean | undefined;
  /** Bounds on every connection attempt, statement and open transaction; default: DEFAULT_DATABASE_TIMEOUTS. */
  readonly timeouts?: DatabaseTimeouts | undefined;
  /**
   * Probes the database when a statement goes unanswered (liveness.ts); pools of one database share one. Default: a
   * probe of `url` of its own.
   */
  readonly liveness?: DatabaseLiveness | undefined;
  /** Told of a connection that broke while idle in the pool (the pool replaces it); default: ignored. */
  readonly onConnectionError?: ((error: Error) => void) | undefined;
  /**
   * `transaction`: the server is reached through a pooler in transaction mode, so no state may outlive a
   * transaction: statements are sent unnamed (never prepared by name), and no session settings are sent at start-up
   * (genericPlans is ignored, synchronousCommit is set per transaction; the server's own DateStyle must be ISO,
   * checked by checkPoolerSession). Default: `session`.
   */
  readonly pooling?: "session" | "transaction" | undefined;
}

/**
 * How much longer than `statement_timeout` the client waits for an answer before it gives the connection up: long
 * enough for the server's own cancellation to arrive first (it leaves the connection usable), a quarter of the
 * statement timeout within 1–5 s.
 */
const clientTimeoutMargin = (statementMs: number): number => Math.min(5_000, Math.max(1_000, statementMs / 4));
/** TCP keepalive probes reveal a peer that vanished while the connection sat idle in the pool. */
const KEEPALIVE_DELAY_MS = 10_000;

export interface OpenDatabase {
  readonly db: Db;
  readonly pool: pg.Pool;
  close(): Promise<void>;
}

// timestamptz → Date is pg's default; int8 (counts) → number, safe below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));

/** One driver, one data layer: Kysely over a pg.Pool, for the embedded cluster and an existing server alike. */
export function openDatabase(options: DatabaseOptions): OpenDatabase {
  const timeouts = options.timeouts ?? DEFAULT_DATABASE_TIMEOUTS;
  const onConnectionError = options.onConnectionError ?? (() => {});
  const sessionMode = options.pooling !== "transaction";
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 20,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: timeouts.connectMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
    ...(timeouts.statementMs > 0
      ? { query_timeout: timeouts.statementMs + clientTimeoutMargin(timeouts.statementMs) }
      : {}),
    // The client keeps a broken connection from crashing the process, and cuts one whose statement goes unanswered
    // while the database answers no probe (liveness.ts). In session mode the driver sends the
    // statements run with runPrepared by name and the session's options are set at start-up; behind a transaction
    // pooler neither may outlive a transaction, so statements go unnamed and the server's own settings apply (the
    // statement bound then belongs on the role: docs/scaling.md).
    Client: watchedClient(options.liveness ?? new DatabaseLiveness(options.url, timeouts.connectMs)),
    ...(sessionMode ? { options: sessionOptions(options, timeouts) } : {}),
  });
  // A connection that breaks while idle: the pool drops it and opens a new one when needed.
  pool.on("error", onConnectionError);
  // Behind a transaction pooler, synchronous_commit = off is set local to each transaction instead (driver.ts).
  const asyncCommit = !sessionMode && options.synchronousCommit === false;
  const dialect = namingDialect(pool, sessionMode, asyncCommit);
  const db = new Kysely<Database>({ dialect });
  runDirectly(db, dialect.run);
  return {
    db,
    pool,
    close: async () => {
      await db.destroy();
      // Kysely ends the pool only if a statement went through its executor: runDirectly's do not.
      if (!pool.ended) await pool.end();
    },
  };
}

function sessionOptions(options: DatabaseOptions, timeouts: DatabaseTimeouts): string {
  // ISO, as pg's own date parser and repositories that read timestamps as text (identities/repo utcText) expect.
  const parts = [
    "-c DateStyle=ISO",
    `-c statement_timeout=${timeouts.statementMs}`,
    `-c idle_in_transaction_session_timeout=${timeouts.idleInTransactionMs}`,
  ];
  if (options.schema !== undefined) parts.push(`-c search_path=${quoteIdent(options.schema)}`);
  if (options.synchronousCommit === false) parts.push("-c synchronous_commit=off");
  if (options.genericPlans === true) parts.push("-c plan_cache_mode=force_generic_plan");
  return parts.join(" ");
}

/**
 * Behind a transaction pooler the session settings of sessionOptions cannot be sent: the server's defaults must
 * already be what Roster relies on. DateStyle ISO is what pg's date parser and the text-timestamp reads expect;
 * PostgreSQL's default configuration has it, and this refuses to start when a server was set otherwise.
 */
export async function checkPoolerSession(db: Db): Promise<void> {
  const { rows } = await sql<{ datestyle: string }>`select current_setting('DateStyle') as datestyle`.execute(db);
  const style = rows[0]?.datestyle ?? "";
  if (!/^ISO\b/i.test(style)) {
    throw new Error(
      `DateStyle is "${style}" on the server; with ROSTER_DATABASE_POOLING=transaction it must be ISO: ` +
        "ALTER DATABASE <name> SET DateStyle = 'ISO, MDY'",
    );
  }
}

export { quoteIdent };
