import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  PostgresAdapter,
  PostgresDialect,
  PostgresDriver,
  type QueryResult,
} from "kysely";
import type pg from "pg";
import { declaredNameOf, shapeName } from "./prepared.js";

/** Per connection, statement shapes beyond this many go unnamed: a shape that varies regardless cannot fill memory. */
const MAX_NAMED_PER_CONNECTION = 200;

/**
 * Kysely's PostgreSQL driver, except that a query run with runPrepared goes to PostgreSQL as a named statement
 * (`namesStatements`: a direct connection) or unnamed like any other (behind a transaction pooler, where the next
 * transaction may run on a server connection that never saw the name).
 */
export function namingDialect(pool: pg.Pool, namesStatements: boolean): Dialect {
  const base = new PostgresDialect({ pool });
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new NamingDriver(pool, namesStatements),
    createQueryCompiler: () => base.createQueryCompiler(),
    createIntrospector: (db) => base.createIntrospector(db),
  };
}

class NamingDriver extends PostgresDriver {
  readonly #pool: pg.Pool;
  readonly #namesStatements: boolean;
  /** One connection object per pooled client: it remembers what was prepared on that server session. */
  readonly #connections = new WeakMap<pg.PoolClient, NamingConnection>();
  #destroyed = false;

  constructor(pool: pg.Pool, namesStatements: boolean) {
    super({ pool });
    this.#pool = pool;
    this.#namesStatements = namesStatements;
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const client = await this.#pool.connect();
    if (this.#destroyed) {
      client.release();
      throw new Error("driver has already been destroyed");
    }
    let connection = this.#connections.get(client);
    if (connection === undefined) {
      connection = new NamingConnection(client, this.#namesStatements);
      this.#connections.set(client, connection);
    }
    return connection;
  }

  override async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as NamingConnection).client.release();
  }

  override async destroy(): Promise<void> {
    this.#destroyed = true;
    await super.destroy();
  }
}

class NamingConnection implements DatabaseConnection {
  readonly client: pg.PoolClient;
  readonly #namesStatements: boolean;
  /** SQL text → name, for the shapes prepared on this connection (pg keeps the parsed statements per connection). */
  readonly #names = new Map<string, string>();

  constructor(client: pg.PoolClient, namesStatements: boolean) {
    this.client = client;
    this.#namesStatements = namesStatements;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const name = this.#nameOf(query);
    const values = [...query.parameters];
    const { command, rowCount, rows } =
      name === undefined
        ? await this.client.query(query.sql, values)
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
    const known = this.#names.get(query.sql);
    if (known !== undefined || this.#names.size >= MAX_NAMED_PER_CONNECTION) return known;
    const name = shapeName(declared, query.sql);
    this.#names.set(query.sql, name);
    return name;
  }
}
