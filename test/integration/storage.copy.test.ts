import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type CopyColumn, copyRows } from "../../src/storage/copy.js";
import { createTestDatabase, type TestDatabase } from "../helpers/app.js";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
  await sql`
    create table copy_probe (n int2 primary key, t text, u uuid)
  `.execute(database.db);
});
afterAll(async () => database.close());

const COLUMNS: CopyColumn[] = [
  { name: "n", type: "int2" },
  { name: "t", type: "text" },
  { name: "u", type: "uuid" },
];

const TEXTS = [
  'a JSON body: {"userName":"a\\"b","note":"line\\nbreak"}',
  "a tab\there, a newline\nhere, a carriage return\rhere, a backslash \\ here",
  "\\N",
  "",
  "Zoë 李 🙂",
  "x".repeat(200_000),
];

interface Probe {
  n: number;
  t: string | null;
  u: string | null;
}

const read = async (): Promise<Probe[]> =>
  (await sql<Probe>`select n, t, u::text as u from copy_probe order by n`.execute(database.db)).rows;

it("stores every value exactly as given, whatever its text holds, and says how many rows", async () => {
  const uuid = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
  const rows = TEXTS.map((t, n) => [n, t, uuid]);
  const stored = await copyRows(database.db, "copy_probe", COLUMNS, [...rows, [99, null, null]]);
  expect(stored).toBe(TEXTS.length + 1);
  const back = await read();
  expect(back.map((r) => r.t)).toEqual([...TEXTS, null]);
  expect(back[0]?.u).toBe(uuid);
  expect(back.at(-1)).toEqual({ n: 99, t: null, u: null });
  await sql`delete from copy_probe`.execute(database.db);
});

it("stores a NUL character, which PostgreSQL text cannot hold, as U+FFFD", async () => {
  await copyRows(database.db, "copy_probe", COLUMNS.slice(0, 2), [[1, "a\u0000b"]]);
  expect((await read())[0]?.t).toBe("a\uFFFDb");
  await sql`delete from copy_probe`.execute(database.db);
});

it("stores nothing for no rows", async () => {
  expect(await copyRows(database.db, "copy_probe", COLUMNS, [])).toBe(0);
});

it("refuses a value of the wrong kind before sending anything", async () => {
  await expect(copyRows(database.db, "copy_probe", COLUMNS.slice(0, 2), [[1, 5]])).rejects.toThrow(
    "a text column needs a string",
  );
  await expect(copyRows(database.db, "copy_probe", COLUMNS.slice(0, 1), [[40_000]])).rejects.toThrow("not an int2");
  await expect(
    copyRows(database.db, "copy_probe", [COLUMNS[0] as CopyColumn, COLUMNS[2] as CopyColumn], [[1, "x"]]),
  ).rejects.toThrow("not a uuid");
  expect(await read()).toEqual([]);
});

it("fails as a whole when PostgreSQL refuses a row, inside a transaction too, leaving the connection usable", async () => {
  await expect(
    database.db.transaction().execute(async (trx) => {
      await copyRows(trx, "copy_probe", COLUMNS.slice(0, 2), [
        [7, "first"],
        [7, "the same key again"],
      ]);
    }),
  ).rejects.toThrow(/duplicate key value/);
  expect(await read()).toEqual([]);
  expect(await copyRows(database.db, "copy_probe", COLUMNS.slice(0, 2), [[8, "after"]])).toBe(1);
});

it("stores arrays (empty, of multi-byte and delimiter-holding text) and bytes exactly", async () => {
  await sql`
    create table copy_arrays (n int4, texts text[], codes int2[], raw bytea)
  `.execute(database.db);
  const columns: CopyColumn[] = [
    { name: "n", type: "int4" },
    { name: "texts", type: "text[]" },
    { name: "codes", type: "int2[]" },
    { name: "raw", type: "bytea" },
  ];
  const bytes = Uint8Array.from({ length: 256 }, (_v, i) => i);
  await copyRows(database.db, "copy_arrays", columns, [
    [100_000, ["Zoë 李", "", "a,b{c}\"d'", "NULL"], [200, -1, 32_767], bytes],
    [-1, [], [], Uint8Array.of()],
  ]);
  const back = (
    await sql<{ n: number; texts: string[]; codes: number[]; raw: Buffer }>`
      select n, texts, codes, raw from copy_arrays order by n desc`.execute(database.db)
  ).rows;
  expect(back[0]?.n).toBe(100_000);
  expect(back[0]?.texts).toEqual(["Zoë 李", "", "a,b{c}\"d'", "NULL"]);
  expect(back[0]?.codes).toEqual([200, -1, 32_767]);
  expect(back[0]?.raw.equals(Buffer.from(bytes))).toBe(true);
  expect(back[1]).toMatchObject({ n: -1, texts: [], codes: [] });
  expect(back[1]?.raw.length).toBe(0);
  await sql`drop table copy_arrays`.execute(database.db);
});
