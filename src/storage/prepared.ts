import { createHash } from "node:crypto";
import { type CompiledQuery, type Kysely, type QueryResult, type RawBuilder, sql } from "kysely";

/**
 * Named prepared statements, opt-in per query, for the hot paths: PostgreSQL parses and plans an unnamed statement
 * on every execution, which for GET /Users/{id} costs several times its execution. A repository declares each such
 * statement once, by name (`preparedStatement("user_by_id")`), and runs it with `runPrepared`: the query is still
 * built and run by Kysely, on the pool or inside a transaction alike, and the connection (driver.ts) sends it with
 * a name, so it parses once per connection and PostgreSQL may reuse its plan.
 *
 * One declared statement may have a few shapes (a column list with or without groups, one filter attribute or
 * another): each distinct SQL text gets its own name, `<declared name>_<digest of the text>`, as PostgreSQL
 * requires one text per name. Nothing is kept per SQL text outside a connection.
 */
export interface PreparedStatement {
  readonly name: string;
  /** Kysely's `sql` template, run as this statement: ``STATEMENT.sql<Row>`select …`.execute(db)``. */
  sql<R>(strings: TemplateStringsArray, ...values: unknown[]): PreparedQuery<R>;
}

export interface PreparedQuery<R> {
  // biome-ignore lint/suspicious/noExplicitAny: any database: only executeQuery is used.
  execute(db: Kysely<any>): Promise<QueryResult<R>>;
}

const NAME = /^[a-z][a-z0-9_]{0,39}$/;

/** Declares a statement to send by name; the name shows in pg_prepared_statements (with a digest of its text). */
export function preparedStatement(name: string): PreparedStatement {
  if (!NAME.test(name)) throw new Error(`prepared statement name ${name} is not 1-40 of [a-z0-9_]`);
  const statement: PreparedStatement = Object.freeze({
    name,
    sql: <R>(strings: TemplateStringsArray, ...values: unknown[]): PreparedQuery<R> => {
      const query = sql<R>(strings, ...values);
      return { execute: (db) => runPrepared(db, statement, query) };
    },
  });
  return statement;
}

/** The property a compiled query carries its statement's name in, from runPrepared to the connection. */
const STATEMENT = Symbol("roster.preparedStatement");

type Named = CompiledQuery & { readonly [STATEMENT]?: string };

type Runner = <R>(query: CompiledQuery) => Promise<QueryResult<R>>;

/** Per database (a Kysely instance on the pool, never a transaction's), how its driver runs a statement itself. */
const directRunners = new WeakMap<object, Runner>();

/** `db`'s statements run with runPrepared outside a transaction go to `run` (database.ts: the driver's own run). */
// biome-ignore lint/suspicious/noExplicitAny: any database.
export function runDirectly(db: Kysely<any>, run: Runner): void {
  directRunners.set(db, run);
}

/** Runs a query (a Kysely builder or an `sql` template, on the pool or in a transaction) as `statement`. */
export function runPrepared<R>(
  // biome-ignore lint/suspicious/noExplicitAny: any database: only executeQuery is used.
  db: Kysely<any>,
  statement: PreparedStatement,
  query: RawBuilder<R> | { compile(): CompiledQuery<R> },
): Promise<QueryResult<R>> {
  const compiled = "isRawBuilder" in query ? query.compile(db) : query.compile();
  const named: Named = Object.freeze({ ...compiled, [STATEMENT]: statement.name });
  const direct = directRunners.get(db);
  return direct === undefined ? db.executeQuery(named as CompiledQuery<R>) : direct<R>(named);
}

/** The declared name a compiled query was run under, if it was run with runPrepared. */
export const declaredNameOf = (query: CompiledQuery): string | undefined => (query as Named)[STATEMENT];

/** The protocol-level name of one shape of a declared statement: stable across connections and processes. */
export const shapeName = (declared: string, sql: string): string =>
  `${declared}_${createHash("sha1").update(sql).digest("hex").slice(0, 16)}`;
