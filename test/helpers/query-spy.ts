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

/** A parameter as an SQL literal: text, numbers, dates, arrays of plain text, null. */
function literalOf(explainer: pg.Client, v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (v instanceof Date) return explainer.escapeLiteral(v.toISOString());
  if (Array.isArray(v)) return explainer.escapeLiteral(`{${v.map((x) => JSON.stringify(String(x))).join(",")}}`);
  return explainer.escapeLiteral(String(v));
}

/**
 * The plan of a logged statement as a prepared statement plans it once it plans generically (as a connection's cached
 * plan is), with its own parameters, as text.
 */
export async function genericPlanOf(explainer: pg.Client, q: LoggedQuery): Promise<string> {
  await explainer.query("set plan_cache_mode = force_generic_plan");
  try {
    await explainer.query(`prepare roster_generic as ${q.sql}`);
    const args = q.parameters.map((v) => literalOf(explainer, v)).join(", ");
    const { rows } = await explainer.query(`explain execute roster_generic(${args})`);
    return rows.map((r: Record<string, string>) => r["QUERY PLAN"]).join("\n");
  } finally {
    await explainer.query("deallocate all");
    await explainer.query("reset plan_cache_mode");
  }
}
