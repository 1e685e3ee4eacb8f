import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { copyRows } from "../../src/storage/copy.js";
import { createTestDatabase, type TestDatabase } from "../helpers/app.js";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
  await sql`create table copy_probe (n int primary key, t text, b boolean, at timestamptz, x double precision)`.execute(
    database.db,
  );
});
afterAll(async () => database.close());

const TRICKY = [
  'a JSON body: {"userName":"a\\"b","note":"line\\nbreak"}',
  "a tab\there, a newline\nhere, a carriage return\rhere, a backslash \\ here",
  "\\N",
  "",
  "Zoë 李 🙂",
  "x".repeat(200_000),
];

it("stores every row exactly as given, whatever its text holds, and says how many", async () => {
  const at = new Date(Date.UTC(2026, 10, 25, 12, 0, 0, 123));
  const rows = TRICKY.map((t, n) => [n, t, n % 2 === 0, at, n + 0.5] as const);
  const stored = await copyRows(
    database.db,
    "copy_probe",
    ["n", "t", "b", "at", "x"],
    [...rows, [99, null, null, null, null]],
  );
  expect(stored).toBe(TRICKY.length + 1);
  const { rows: back } = await sql<{
    n: number;
    t: string | null;
    b: boolean | null;
    at: Date | null;
    x: number | null;
  }>`
    select n, t, b, at, x from copy_probe order by n`.execute(database.db);
  expect(back.map((r) => r.t)).toEqual([...TRICKY, null]);
  expect(back.map((r) => r.b)).toEqual([...TRICKY.map((_t, n) => n % 2 === 0), null]);
  expect(back[0]?.at?.toISOString()).toBe(at.toISOString());
  expect(back[1]?.x).toBe(1.5);
  expect(back.at(-1)).toEqual({ n: 99, t: null, b: null, at: null, x: null });
});

it("stores nothing for no rows", async () => {
  expect(await copyRows(database.db, "copy_probe", ["n"], [])).toBe(0);
});

it("fails as a whole on a bad row, inside a transaction too, leaving the connection usable", async () => {
  await expect(
    database.db.transaction().execute(async (trx) => {
      await copyRows(
        trx,
        "copy_probe",
        ["n", "t"],
        [
          [1000, "fine"],
          ["not a number", "bad"],
        ],
      );
    }),
  ).rejects.toThrow(/invalid input syntax for type integer/);
  const { rows } = await sql<{ c: number }>`select count(*)::int as c from copy_probe where n = 1000`.execute(
    database.db,
  );
  expect(rows[0]?.c).toBe(0);
  expect(await copyRows(database.db, "copy_probe", ["n", "t"], [[1001, "after"]])).toBe(1);
});
