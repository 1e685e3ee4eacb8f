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

export interface OldTestDatabase extends TestDatabase {
  /** Migrates up or down to `migration` (included). */
  migrateTo(migration: string): Promise<void>;
  migrateToLatest(): Promise<void>;
}

export interface TestDatabaseOptions {
  /**
   * How far it is migrated: `"latest"` (the default: a copy of the run's migrated template, no migration runs),
   * `"none"` (an empty database, as a first start finds it) or a migration's name (up to it, included, for a test of
   * what a later migration does with the rows an older one left).
   */
  readonly migrated?: "latest" | "none" | string;
}

/** The URL of database `name` on the server of `serverUrl` (the embedded cluster's socket parameters kept). */
export function databaseUrlOf(name: string, serverUrl = inject("databaseUrl")): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
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

/**
 * The one way a test gets a database: a whole database of its own on the run's PostgreSQL server, dropped on close.
 * Migrated ones are copied from the template the global setup migrated (`create database … template`), which costs
 * a fraction of running every migration again for each file.
 */
export async function createTestDatabase(options?: { readonly migrated?: "latest" }): Promise<TestDatabase>;
export async function createTestDatabase(options: TestDatabaseOptions): Promise<OldTestDatabase>;
export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<OldTestDatabase> {
  const serverUrl = inject("databaseUrl");
  const template = inject("templateDatabase");
  const migrated = options.migrated ?? "latest";
  const name = `${template.replace(/_tpl$/, "")}_${randomBytes(5).toString("hex")}`;
  const copy = migrated === "latest" ? ` template ${quoteIdent(template)}` : "";
  await adminQuery(`create database ${quoteIdent(name)}${copy}`, serverUrl);
  const url = databaseUrlOf(name, serverUrl);
  const schema = "public";
  // Seeding tens of thousands of rows in one statement may outlast the server's statement bound on a loaded host.
  const opened = openDatabase({
    url,
    schema,
    poolSize: 10,
    timeouts: { ...DEFAULT_DATABASE_TIMEOUTS, statementMs: 0 },
  });
  const migrator = new Migrator({
    db: opened.db,
    provider: { getMigrations: async () => MIGRATIONS },
    allowUnorderedMigrations: true,
    migrationTableSchema: schema,
  });
  const migrateTo = async (migration: string) => {
    const result = await migrator.migrateTo(migration);
    if (result.error !== undefined) throw result.error;
  };
  if (migrated !== "latest" && migrated !== "none") await migrateTo(migrated);
  let closed = false;
  return {
    url,
    schema,
    db: opened.db,
    migrateTo,
    async migrateToLatest() {
      await migrate(opened.db, schema);
    },
    async close() {
      if (closed) return;
      closed = true;
      await opened.close();
      await adminQuery(`drop database if exists ${quoteIdent(name)} with (force)`, serverUrl);
    },
  };
}

/** @deprecated A test database migrated up to `migration`: `createTestDatabase({ migrated: migration })`. */
export function createTestDatabaseAt(migration: string): Promise<OldTestDatabase> {
  return createTestDatabase({ migrated: migration });
}

export interface ServerDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

/**
 * A database for a Roster child process, which migrates it itself at start (an empty one) or finds it migrated
 * (`migrated: "latest"`); dropped by `drop`.
 */
export async function createServerDatabase(
  options: TestDatabaseOptions = { migrated: "none" },
): Promise<ServerDatabase> {
  const database = await createTestDatabase(options);
  // The child opens its own pool; this one would only hold a connection the drop has to force closed.
  return { url: database.url, drop: () => database.close() };
}
