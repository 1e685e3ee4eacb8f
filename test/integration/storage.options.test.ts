import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/storage/database.js";
import { preparedStatement, runPrepared, shapeName } from "../../src/storage/prepared.js";
import { createTestDatabase, type TestDatabase } from "../helpers/app.js";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => database.close());

const setting = async (synchronousCommit?: boolean) => {
  const opened = openDatabase({ url: database.url, schema: database.schema, poolSize: 1, synchronousCommit });
  try {
    const { rows } = await sql<{ sc: string; sp: string }>`
      select current_setting('synchronous_commit') as sc, current_setting('search_path') as sp`.execute(opened.db);
    return rows[0];
  } finally {
    await opened.close();
  }
};

describe("openDatabase synchronousCommit (webhook bookkeeping only)", () => {
  it("is synchronous by default, off only when asked, and keeps the schema either way", async () => {
    expect((await setting())?.sc).toBe("on");
    const relaxed = await setting(false);
    expect(relaxed?.sc).toBe("off");
    expect(relaxed?.sp).toContain(database.schema);
  });
});

describe("openDatabase synchronousCommit behind a transaction pooler", () => {
  it("is off in each transaction and lone statement, local to it: the session itself keeps the server's", async () => {
    const options = { url: database.url, poolSize: 1, pooling: "transaction" as const, synchronousCommit: false };
    const opened = openDatabase(options);
    const current = sql<{ sc: string }>`select current_setting('synchronous_commit') as sc`;
    try {
      expect((await current.execute(opened.db)).rows).toEqual([{ sc: "off" }]);
      const inside = await opened.db.transaction().execute(async (tx) => (await current.execute(tx)).rows);
      expect(inside).toEqual([{ sc: "off" }]);
      // A failing lone statement rolls its transaction back: the connection goes on.
      await expect(sql`select 1 / 0`.execute(opened.db)).rejects.toThrow(/division by zero/);
      expect((await current.execute(opened.db)).rows).toEqual([{ sc: "off" }]);
      // The same (only) connection, outside Roster's driver: nothing outlived a transaction.
      const raw = await opened.pool.query<{ sc: string; open: boolean }>(
        "select current_setting('synchronous_commit') as sc, now() <> statement_timestamp() as open",
      );
      expect(raw.rows).toEqual([{ sc: "on", open: false }]);
    } finally {
      await opened.close();
    }
  });
});

const SELECT_X = preparedStatement("storage_options_x");

describe("prepared statements", () => {
  it("run as one named prepared statement per text on each connection; other statements stay unnamed", async () => {
    const opened = openDatabase({ url: database.url, schema: database.schema, poolSize: 1 });
    try {
      for (const n of [1, 2, 3]) {
        const query = sql<{ x: number }>`select ${n}::int as x`;
        const { rows } = await runPrepared(opened.db, SELECT_X, query);
        expect(rows).toEqual([{ x: n }]);
      }
      await sql`select ${4}::int as x`.execute(opened.db);
      const { rows } = await sql<{ name: string; statement: string }>`
        select name, statement from pg_prepared_statements`.execute(opened.db);
      expect(rows).toHaveLength(1);
      expect(rows[0]?.name).toBe(shapeName("storage_options_x", "select $1::int as x"));
      expect(rows[0]?.statement).toBe("select $1::int as x");
    } finally {
      await opened.close();
    }
  });
});
