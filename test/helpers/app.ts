import { randomBytes } from "node:crypto";
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import pg from "pg";
import { inject } from "vitest";
import { type AppDeps, buildApp } from "../../src/app.js";
import { ManualClock } from "../../src/platform/clock.js";
import { hashSecret } from "../../src/platform/crypto.js";
import { createLogger } from "../../src/platform/logger.js";
import { type Db, migrate, openDatabase, quoteIdent } from "../../src/storage/database.js";
import { DEFAULT_DATABASE_TIMEOUTS } from "../../src/storage/timeouts.js";

export const ADMIN_TOKEN = "test-admin-token-0123456789";
export const PUBLIC_URL = "http://roster.test";

export interface TestDatabase {
  readonly url: string;
  readonly schema: string;
  readonly db: Db;
  close(): Promise<void>;
}

/** A fresh, migrated schema on the run's PostgreSQL; dropped on close. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const url = inject("databaseUrl");
  const schema = `t_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${quoteIdent(schema)}`);
  await admin.end();
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
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`drop schema ${quoteIdent(schema)} cascade`);
      await c.end();
    },
  };
}

export interface TestApp {
  readonly app: FastifyInstance;
  readonly db: Db;
  readonly database: TestDatabase;
  readonly clock: ManualClock;
  readonly secrets: readonly Buffer[];
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Reuse a database (two app instances on one PostgreSQL). */
  readonly database?: TestDatabase;
  readonly secrets?: readonly Buffer[];
  readonly clock?: ManualClock;
  readonly extra?: Partial<AppDeps>;
}

/** buildApp on a real PostgreSQL schema, with a manual clock and a fixed admin token. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase());
  const ownsDatabase = options.database === undefined;
  const clock = options.clock ?? new ManualClock(Date.now());
  const secrets = options.secrets ?? [Buffer.from("test-secret-key-test-secret-key-0123456789")];
  const app = await buildApp({
    db: database.db,
    clock,
    logger: createLogger((process.env.ROSTER_TEST_LOG_LEVEL as "silent" | undefined) ?? "silent"),
    secrets,
    adminTokenHash: hashSecret(ADMIN_TOKEN),
    publicUrl: () => PUBLIC_URL,
    ...options.extra,
  });
  await app.ready();
  return {
    app,
    db: database.db,
    database,
    clock,
    secrets,
    request: (o) => app.inject(o),
    async close() {
      await app.close();
      if (ownsDatabase) await database.close();
    },
  };
}
