import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Db, openDatabase, type OpenDatabase } from "../../src/storage/database.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { useTestApp } from "../helpers/suite.js";
import { type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { USER_SCHEMA } from "../helpers/constants.js";

/**
 * GET and list of users run on the reads pool (storage/open.ts), whose sessions plan named statements once
 * (plan_cache_mode = force_generic_plan). On its own, PostgreSQL re-planned every list page (a generic plan cannot
 * know OFFSET, so it always looked dearer than a custom one): ~0.7 ms of planning per page. The reads pool here has
 * one connection, so pg_prepared_statements on it shows every statement the requests ran, and how each was planned.
 * The plans themselves (index use, for skewed organizations too) are checked in users.indexes.test.ts.
 */
const { database } = useTestApp({ app: false });
let main: OpenDatabase;
let reads: OpenDatabase;
let t: TestApp;
let c: SeededClient;

beforeAll(async () => {
  main = openDatabase({ url: database.url, schema: database.schema, poolSize: 1 });
  reads = openDatabase({ url: database.url, schema: database.schema, poolSize: 1, genericPlans: true });
  t = await createTestApp({ database, extra: { db: main.db, reads: reads.db } });
  c = await seedClient(t);
  for (let i = 0; i < 30; i++) {
    const res = await scim(t, c, "POST", "/Users", {
      schemas: [USER_SCHEMA],
      userName: `generic${i}@example.com`,
    });
    expect(res.statusCode).toBe(201);
  }
  await sql`analyze`.execute(database.db);
});
afterAll(async () => {
  await t.close();
  await main.close();
  await reads.close();
});

interface Prepared {
  statement: string;
  generic_plans: number;
  custom_plans: number;
}

async function preparedOn(db: Db): Promise<Prepared[]> {
  const { rows } = await sql<Prepared>`select statement, generic_plans::int, custom_plans::int
    from pg_prepared_statements where statement like '%identities%'`.execute(db);
  return rows;
}

describe("the reads pool", () => {
  it("plans each list page and GET statement once, whatever startIndex, count or cursor", async () => {
    const first = await scim(t, c, "GET", "/Users?startIndex=1&count=10");
    const user = first.json().Resources[0].id as string;
    for (let i = 0; i < 8; i++) {
      expect((await scim(t, c, "GET", `/Users?startIndex=${1 + i * 3}&count=${5 + i}`)).statusCode).toBe(200);
      expect((await scim(t, c, "GET", `/Users?count=${5 + i}&cursor=`)).statusCode).toBe(200);
      expect((await scim(t, c, "GET", `/Users/${user}`)).statusCode).toBe(200);
      expect((await scim(t, c, "GET", `/Users?attributes=userName&startIndex=${2 + i}&count=4`)).statusCode).toBe(200);
    }
    const statements = await preparedOn(reads.db);
    // Offset page, cursor page, GET by id; and the projected offset page and GET (object path).
    expect(statements.length).toBeGreaterThanOrEqual(4);
    for (const s of statements) {
      expect({ statement: s.statement.slice(0, 80), custom: s.custom_plans }).toEqual({
        statement: s.statement.slice(0, 80),
        custom: 0,
      });
      expect(s.generic_plans).toBeGreaterThan(0);
    }
  });

  it("is where the reads go: the main pool runs none of them", async () => {
    await scim(t, c, "GET", "/Users?startIndex=1&count=10");
    // The main pool here has one connection: every statement the app prepared on it is listed.
    const onMain = await preparedOn(main.db);
    // A list page's OFFSET is a parameter: no statement of the main pool has one.
    expect(onMain.filter((s) => /offset \$\d|any\(array/i.test(s.statement))).toEqual([]);
  });
});
