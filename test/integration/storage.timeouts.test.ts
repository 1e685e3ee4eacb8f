import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, quoteIdent } from "../../src/storage/database.js";
import { createTestApp, createTestDatabase, type TestApp, type TestDatabase } from "../helpers/app.js";
import { adminCall, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { ERROR_SCHEMA, USER_SCHEMA } from "../helpers/constants.js";
import { adminError } from "../helpers/errors.js";

/**
 * The bounds on database waits, in process on a real PostgreSQL: a statement held up by a lock ends at
 * `statement_timeout` and the request answers 503 in its protocol's format, never hanging; every pooled session runs
 * with the configured bounds.
 */
const TIMEOUTS = { connectMs: 1_000, statementMs: 500, idleInTransactionMs: 2_000 };

let database: TestDatabase;
let bounded: ReturnType<typeof openDatabase>;
let t: TestApp;
let client: SeededClient;
let locker: pg.Client;

beforeAll(async () => {
  database = await createTestDatabase();
  bounded = openDatabase({ url: database.url, schema: database.schema, poolSize: 4, timeouts: TIMEOUTS });
  t = await createTestApp({ database: { ...database, db: bounded.db } });
  client = await seedClient(t);
  locker = new pg.Client({ connectionString: database.url });
  await locker.connect();
});

afterAll(async () => {
  await locker.end();
  await t.close();
  await bounded.close();
  await database.close();
});

describe("database timeouts", () => {
  it("answers 503 in the SCIM and admin formats when a statement outlives statement_timeout, then serves again", async () => {
    await locker.query("begin");
    await locker.query(`lock table ${quoteIdent(database.schema)}.identities in access exclusive mode`);
    try {
      const started = Date.now();
      const created = await scim(t, client, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "held@example.com" });
      expect(Date.now() - started).toBeLessThan(TIMEOUTS.statementMs * 6);
      expect(created.statusCode).toBe(503);
      expect(created.headers["content-type"]).toMatch(/^application\/scim\+json/);
      expect(created.headers["retry-after"]).toBeDefined();
      expect(created.json()).toEqual({
        schemas: [ERROR_SCHEMA],
        status: "503",
        detail: "the service is temporarily unavailable; retry later",
      });

      const listed = await adminCall(t, "GET", `/identities?organization_id=${client.organizationId}`);
      expect(listed.statusCode).toBe(503);
      expect(listed.json()).toEqual(
        adminError(503, "UNAVAILABLE", "the service is temporarily unavailable; retry later"),
      );
    } finally {
      await locker.query("rollback");
    }
    const again = await scim(t, client, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "held@example.com" });
    expect(again.statusCode).toBe(201);
  });

  it("runs every pooled session with the configured bounds", async () => {
    const { rows } = await sql<{ statement: string; idle: string }>`
      select current_setting('statement_timeout') as statement,
             current_setting('idle_in_transaction_session_timeout') as idle`.execute(bounded.db);
    expect(rows).toEqual([{ statement: "500ms", idle: "2s" }]);
  });
});
