import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import type { Db } from "../../src/storage/database.js";
import { quoteIdent } from "../../src/storage/database.js";
import type { Database } from "../../src/storage/schema.js";
import type { TestDatabase } from "./app.js";

export interface LoggedQuery {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

/** A second Kysely on the test schema that records every query it runs, for query counts and EXPLAIN. */
export function loggingDb(database: TestDatabase): { db: Db; queries: LoggedQuery[]; close(): Promise<void> } {
  const queries: LoggedQuery[] = [];
  const pool = new pg.Pool({
    connectionString: database.url,
    max: 5,
    options: `-c search_path=${quoteIdent(database.schema)}`,
  });
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      if (event.level === "query") queries.push({ sql: event.query.sql, parameters: event.query.parameters });
    },
  });
  return { db, queries, close: () => db.destroy() };
}
