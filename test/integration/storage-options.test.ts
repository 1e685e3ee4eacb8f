import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/storage/database.js";
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
