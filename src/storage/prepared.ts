import type { CompiledQuery, Kysely } from "kysely";
import pg from "pg";

/**
 * Named prepared statements, opt-in per query, for the hottest reads: PostgreSQL parses and plans an unnamed
 * statement on every execution, which for GET /Users/{id} (two correlated subqueries) costs four times its
 * execution. A query the repository passes through `prepared()` is still built and run by Kysely, on the pool or
 * inside a transaction alike; the pg client below recognises its SQL text and sends it with a stable name, so each
 * connection parses it once and PostgreSQL may reuse its plan.
 *
 * Names are per SQL text (one query shape → one name, as pg requires), so the set is bounded by the query shapes
 * the repositories build, never by the values; MAX_STATEMENTS guards against a shape that would vary regardless.
 */
const MAX_STATEMENTS = 200;
const names = new Map<string, string>();

/**
 * The other way in, for fixed SQL written by hand (the hot write paths): a statement whose text starts with this
 * marker is sent as a named prepared statement too, under the same naming (one name per text, shared map).
 */
export const PREPARED = "/*prepared*/ ";

const nameOf = (text: string): string | undefined => {
  const known = names.get(text);
  if (known !== undefined || !text.startsWith(PREPARED) || names.size >= MAX_STATEMENTS) return known;
  const name = `roster_${names.size + 1}`;
  names.set(text, name);
  return name;
};

/** Marks a compiled query's SQL text as a named prepared statement; returns the query to run with executeQuery. */
export function prepared<R>(query: CompiledQuery<R>): CompiledQuery<R> {
  if (!names.has(query.sql) && names.size < MAX_STATEMENTS) names.set(query.sql, `roster_${names.size + 1}`);
  return query;
}

/** Builds and runs a Kysely query (on the pool or a transaction) as a named prepared statement; returns its rows. */
export async function executePrepared<R>(
  // biome-ignore lint/suspicious/noExplicitAny: any database: only executeQuery is used.
  db: Kysely<any>,
  query: { compile(): CompiledQuery<R> },
): Promise<R[]> {
  return (await db.executeQuery(prepared(query.compile()))).rows;
}

/** The statement name for this SQL text, when it was marked. */
export const statementName = (sql: string): string | undefined => names.get(sql);

type QueryArgs = Parameters<pg.Client["query"]>;

/**
 * A pg client that sends the marked SQL texts as named statements (pg caches them per connection), and that
 * survives the loss of its connection.
 *
 * pg emits `error` on a client whose connection breaks (a terminated backend, a restarted server, a reset socket);
 * while the client is checked out of the pool nobody listens, and an unheard `error` event ends the process. Here
 * it is always heard: the query under way fails with the error, the client is no longer queryable, and the pool
 * drops it on release.
 *
 * A query that outlives the client-side `query_timeout` (a server that stopped answering, a black-holed network)
 * destroys the connection too: pg would otherwise leave the unanswered statement in front of the next one.
 */
export class PreparingClient extends pg.Client {
  /** Whether marked statements are sent by name (a direct connection) or unnamed (behind a transaction pooler). */
  protected readonly namesStatements: boolean = true;

  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on("error", ignoreBrokenConnection);
  }

  // biome-ignore lint/suspicious/noExplicitAny: pg's query() is a dozen overloads; this forwards all of them.
  override query(...args: any[]): any {
    const [text, values] = args as [unknown, unknown];
    if (this.namesStatements && typeof text === "string" && Array.isArray(values) && args.length === 2) {
      const name = nameOf(text);
      if (name !== undefined) return this.#dropOnTimeout(super.query({ name, text, values }));
    }
    return this.#dropOnTimeout((super.query as (...a: QueryArgs) => unknown)(...(args as QueryArgs)));
  }

  #dropOnTimeout(result: unknown): unknown {
    if (!(result instanceof Promise)) return result;
    return result.catch((e: unknown) => {
      if (e instanceof Error && e.message === QUERY_TIMEOUT_MESSAGE) this.connection.stream.destroy();
      throw e;
    });
  }
}

/**
 * The same client for a server behind a transaction pooler: consecutive transactions may run on different server
 * connections, where a statement prepared by name on another one is missing, so every statement goes unnamed.
 */
export class UnnamedClient extends PreparingClient {
  protected override readonly namesStatements: boolean = false;
}

/** pg's own message for a `query_timeout` (it carries no code). */
const QUERY_TIMEOUT_MESSAGE = "Query read timeout";

const ignoreBrokenConnection = (): void => {};
