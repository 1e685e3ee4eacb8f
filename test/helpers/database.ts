import { randomBytes } from "node:crypto";
import { Migrator } from "kysely";
import pg from "pg";
import { inject } from "vitest";
import { type Db, openDatabase, quoteIdent } from "../../src/storage/database.js";
import { migrate } from "../../src/storage/migrate.js";
import { MIGRATIONS } from "../../src/storage/migrations/index.js";
import { DEFAULT_DATABASE_TIMEOUTS } from "../../src/storage/timeouts.js";

export interface TestDatabase {
  readonly url: string;
  readonly schema: string;
  readonly db: Db;
  close(): Promise<void>;
}

/** Runs one statement on the run's PostgreSQL server as its own session. */
export async function adminQuery(statement: string, url = inject("databaseUrl")): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(statement);
  } finally {
    await admin.end();
  }
}

/** A fresh, migrated schema on the run's PostgreSQL; dropped on close. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const url = inject("databaseUrl");
  const schema = `t_${randomBytes(6).toString("hex")}`;
  await adminQuery(`create schema ${quoteIdent(schema)}`, url);
  // Seeding tens of thousands of rows in one statement may outlast the server's statement bound on a loaded host.
  const opened = openDatabase({
    url,
    schema,
    poolSize: 10,
    timeouts: { ...DEFAULT_DATABASE_TIMEOUTS, statementMs: 0 },
  });
  await migrate(opened.db, schema);
  return {
    url,
    schema,
    db: opened.db,
    async close() {
      await opened.close();
      await adminQuery(`drop schema ${quoteIdent(schema)} cascade`, url);
    },
  };
}

export interface OldTestDatabase extends TestDatabase {
  /** Migrates up or down to `migration` (included). */
  migrateTo(migration: string): Promise<void>;
  migrateToLatest(): Promise<void>;
}

/**
 * A fresh schema migrated only up to `migration` (included), for a test of what a later migration does with the
 * rows an older one left; dropped on close.
 */
export async function createTestDatabaseAt(migration: string): Promise<OldTestDatabase> {
  const url = inject("databaseUrl");
  const schema = `t_${randomBytes(6).toString("hex")}`;
  await adminQuery(`create schema ${quoteIdent(schema)}`, url);
  const opened = openDatabase({ url, schema, poolSize: 2 });
  const migrator = new Migrator({
    db: opened.db,
    provider: { getMigrations: async () => MIGRATIONS },
    allowUnorderedMigrations: true,
    migrationTableSchema: schema,
  });
  const migrateTo = async (name: string) => {
    const result = await migrator.migrateTo(name);
    if (result.error !== undefined) throw result.error;
  };
  await migrateTo(migration);
  return {
    url,
    schema,
    db: opened.db,
    migrateTo,
    async migrateToLatest() {
      await migrate(opened.db, schema);
    },
    async close() {
      await opened.close();
      await adminQuery(`drop schema ${quoteIdent(schema)} cascade`, url);
    },
  };
}

export interface ServerDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

/** A whole database of its own on the run's PostgreSQL server, for a Roster child process; dropped by `drop`. */
export async function createServerDatabase(): Promise<ServerDatabase> {
  const serverUrl = inject("databaseUrl");
  const name = `roster_proc_${randomBytes(5).toString("hex")}`;
  await adminQuery(`create database ${quoteIdent(name)}`, serverUrl);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => adminQuery(`drop database if exists ${quoteIdent(name)} with (force)`, serverUrl),
  };
}
