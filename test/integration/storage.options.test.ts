import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, PREPARED } from "../../src/storage/database.js";
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

describe("PREPARED statements", () => {
  it("run as one named prepared statement per text on each connection; other statements stay unnamed", async () => {
    const opened = openDatabase({ url: database.url, schema: database.schema, poolSize: 1 });
    try {
      for (const n of [1, 2, 3]) {
        const { rows } = await sql<{ x: number }>`${sql.raw(PREPARED)}select ${n}::int as x`.execute(opened.db);
        expect(rows).toEqual([{ x: n }]);
      }
      await sql`select ${4}::int as x`.execute(opened.db);
      const { rows } = await sql<{ name: string; statement: string }>`
        select name, statement from pg_prepared_statements`.execute(opened.db);
      expect(rows).toHaveLength(1);
      expect(rows[0]?.name).toMatch(/^roster_\d+$/);
      expect(rows[0]?.statement.startsWith(PREPARED)).toBe(true);
    } finally {
      await opened.close();
    }
  });
});
