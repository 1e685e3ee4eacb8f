import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  PostgresAdapter,
  PostgresDialect,
  PostgresDriver,
  type QueryResult,
  type TransactionSettings,
} from "kysely";
import type pg from "pg";
import { ResilientClient } from "./client.js";
import { DescribedQuery, type RowDescription } from "./described-query.js";
import { declaredNameOf, shapeName } from "./prepared.js";

/** Per connection, statement shapes beyond this many go unnamed: a shape that varies regardless cannot fill memory. */
const MAX_NAMED_PER_CONNECTION = 200;

/**
 * Kysely's PostgreSQL driver, except that a query run with runPrepared goes to PostgreSQL as a named statement
 * (`namesStatements`: a direct connection) or unnamed like any other (behind a transaction pooler, where the next
 * transaction may run on a server connection that never saw the name).
 *
 * `asyncCommit`: every transaction commits with `synchronous_commit = off`, set local to it — the way to have it
 * behind a transaction pooler, where a session setting cannot be sent (database.ts DatabaseOptions.synchronousCommit).
 * A statement outside a transaction is run in one of its own: `begin` with the setting, the statement, `commit`.
 */
export function namingDialect(pool: pg.Pool, namesStatements: boolean, asyncCommit = false): NamingDialect {
  const base = new PostgresDialect({ pool });
  const driver = new NamingDriver(pool, namesStatements, asyncCommit);
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => driver,
    createQueryCompiler: () => base.createQueryCompiler(),
    createIntrospector: (db) => base.createIntrospector(db),
    run: (query) => driver.run(query),
  };
}

export interface NamingDialect extends Dialect {
  /**
   * Runs one compiled query on a connection of the pool, outside any transaction, as Kysely's executor would
   * (Roster installs no Kysely plugin) but without its layers: the executor, its connection provider and the
   * runtime driver each wrap a statement in promises of their own, ~5 of the ~11 a statement's run makes.
   */
  run<R>(query: CompiledQuery): Promise<QueryResult<R>>;
}

class NamingDriver extends PostgresDriver {
  readonly #pool: pg.Pool;
  readonly #namesStatements: boolean;
  readonly #asyncCommit: boolean;
  /** One connection object per pooled client: it remembers what was prepared on that server session. */
  readonly #connections = new WeakMap<pg.PoolClient, NamingConnection>();
  #destroyed = false;

  constructor(pool: pg.Pool, namesStatements: boolean, asyncCommit: boolean) {
    super({ pool });
    this.#pool = pool;
    this.#namesStatements = namesStatements;
    this.#asyncCommit = asyncCommit;
  }

  override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    // Marked first: the `begin` itself, like every statement up to `commit`, is not wrapped in a transaction.
    const naming = connection as NamingConnection;
    naming.inTransaction = true;
    try {
      await super.beginTransaction(connection, settings);
      if (this.#asyncCommit) await naming.client.query(SET_ASYNC_COMMIT);
    } catch (e) {
      naming.inTransaction = false;
      throw e;
    }
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await super.commitTransaction(connection);
    } finally {
      (connection as NamingConnection).inTransaction = false;
    }
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await super.rollbackTransaction(connection);
    } finally {
      (connection as NamingConnection).inTransaction = false;
    }
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const client = await this.#pool.connect();
    if (this.#destroyed) {
      client.release();
      throw new Error("driver has already been destroyed");
    }
    let connection = this.#connections.get(client);
    if (connection === undefined) {
      connection = new NamingConnection(client, this.#namesStatements, this.#asyncCommit);
      this.#connections.set(client, connection);
    }
    return connection;
  }

  /** See NamingDialect.run. */
  async run<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const connection = (await this.acquireConnection()) as NamingConnection;
    try {
      return await connection.executeQuery<R>(query);
    } finally {
      connection.client.release();
    }
  }

  override async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as NamingConnection).client.release();
  }

  override async destroy(): Promise<void> {
    this.#destroyed = true;
    await super.destroy();
  }
}

const SET_ASYNC_COMMIT = "set local synchronous_commit = off";

class NamingConnection implements DatabaseConnection {
  readonly client: pg.PoolClient;
  /** Within a transaction begun by the driver (its own statements need no transaction of their own). */
  inTransaction = false;
  readonly #namesStatements: boolean;
  readonly #asyncCommit: boolean;
  /**
   * The shapes named on this connection (pg keeps the parsed statements per connection), per declared statement.
   * Found by comparing texts, not by a Map keyed by the text: each query compiles a new string, and hashing a 1–3 KB
   * text on every request cost ~2 µs (a GET's statement), where comparing it with its statement's few shapes costs
   * ~0.1 µs.
   */
  readonly #shapes = new Map<string, { readonly sql: string; readonly name: string }[]>();
  /** The rows of the statements named on this connection, as PostgreSQL described them (DescribedQuery). */
  readonly #described = new Map<string, RowDescription>();
  #named = 0;

  constructor(client: pg.PoolClient, namesStatements: boolean, asyncCommit: boolean) {
    this.client = client;
    this.#namesStatements = namesStatements;
    this.#asyncCommit = asyncCommit;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!this.#asyncCommit || this.inTransaction) return this.#execute(query);
    // One simple-protocol message: the pooler hands the server connection over for the whole transaction.
    await this.client.query(`begin; ${SET_ASYNC_COMMIT}`);
    let result: QueryResult<R>;
    try {
      result = await this.#execute(query);
    } catch (e) {
      // A connection cut meanwhile (liveness.ts) has nothing left to roll back: the statement's error is the one.
      await this.client.query("rollback").catch(() => {});
      throw e;
    }
    await this.client.query("commit");
    return result;
  }

  async #execute<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const name = this.#nameOf(query);
    const values = [...query.parameters];
    const { command, rowCount, rows } =
      name === undefined
        ? await this.client.query(query.sql, values)
        : this.client instanceof ResilientClient
          ? // ResilientClient answers a DescribedQuery with a promise of its result, as it does a query's config.
            ((await this.client.query(
              new DescribedQuery({ name, text: query.sql, values }, this.#described),
            )) as unknown as pg.QueryResult)
          : await this.client.query({ name, text: query.sql, values });
    const changing = command === "INSERT" || command === "UPDATE" || command === "DELETE" || command === "MERGE";
    return changing ? { numAffectedRows: BigInt(rowCount ?? 0), rows: rows ?? [] } : { rows: rows ?? [] };
  }

  // biome-ignore lint/correctness/useYield: streaming is not offered; nothing in Roster streams.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("streaming queries is not supported");
  }

  #nameOf(query: CompiledQuery): string | undefined {
    if (!this.#namesStatements) return undefined;
    const declared = declaredNameOf(query);
    if (declared === undefined) return undefined;
    const shapes = this.#shapes.get(declared) ?? [];
    const text = query.sql;
    for (const shape of shapes) if (shape.sql.length === text.length && shape.sql === text) return shape.name;
    if (this.#named >= MAX_NAMED_PER_CONNECTION) return undefined;
    const name = shapeName(declared, text);
    shapes.push({ sql: text, name });
    this.#shapes.set(declared, shapes);
    this.#named += 1;
    return name;
  }
}
