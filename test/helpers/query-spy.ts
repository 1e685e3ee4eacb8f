import { Kysely } from "kysely";
import pg from "pg";
import { type Db, quoteIdent } from "../../src/storage/database.js";
import { namingDialect } from "../../src/storage/driver.js";
import type { Database } from "../../src/storage/schema.js";
import type { TestDatabase } from "./database.js";

export interface LoggedQuery {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

/**
 * Every statement an app sends, as compiled SQL with its parameters: for counting the reads a request makes and for
 * EXPLAINing the exact statements. The app runs on `db`, a Kysely of its own on the test schema that logs each query.
 */
export interface QuerySpy {
  readonly db: Db;
  readonly queries: LoggedQuery[];
  /** Statements since the last reset whose SQL mentions `text` (a table name, say). */
  mentioning(text: string): number;
  reset(): void;
  close(): Promise<void>;
}

export function spyOnQueries(database: TestDatabase): QuerySpy {
  const queries: LoggedQuery[] = [];
  const pool = new pg.Pool({
    connectionString: database.url,
    max: 5,
    options: `-c search_path=${quoteIdent(database.schema)}`,
  });
  // An idle connection terminated by the drop of the file's database at teardown is its end, not the test's error
  // (a pool without this listener makes it an uncaught exception); a statement that fails still rejects its query.
  pool.on("error", () => {});
  const db = new Kysely<Database>({
    dialect: namingDialect(pool, false),
    log: (event) => {
      if (event.level === "query") queries.push({ sql: event.query.sql, parameters: event.query.parameters });
    },
  });
  return {
    db,
    queries,
    mentioning: (text) => queries.filter((q) => q.sql.includes(text)).length,
    reset: () => {
      queries.length = 0;
    },
    close: () => db.destroy(),
  };
}

/**
 * A session on the test schema that plans without sequential scans, so a statement no index serves shows a Seq Scan
 * in its plan; `end()` it after the suite.
 */
export async function openExplainer(database: TestDatabase): Promise<pg.Client> {
  const explainer = new pg.Client({
    connectionString: database.url,
    options: `-c search_path=${quoteIdent(database.schema)}`,
  });
  // The file's database may be dropped (connections terminated) while this client still idles at teardown: that is
  // its end, not an error of the test. A failing statement still rejects its own query.
  explainer.on("error", () => {});
  await explainer.connect();
  await explainer.query("set enable_seqscan = off");
  return explainer;
}

/** The plan of a logged statement, with its own parameters, as text. */
export async function planOf(explainer: pg.Client, q: LoggedQuery): Promise<string> {
  const { rows } = await explainer.query(`explain ${q.sql}`, [...q.parameters]);
  return rows.map((r: Record<string, string>) => r["QUERY PLAN"]).join("\n");
}
