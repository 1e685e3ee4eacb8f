import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as guardStatements from "../../src/storage/migrations/0046-guard-statements.js";
import { createTestDatabase, type OldTestDatabase, type TestDatabase } from "../helpers/database.js";

/**
 * 0046-guard-statements rewrites the guard's routing function in place (two statements it ran for every
 * deprovisioning batch now run only when needed); its `down` must give back the function 0045 left, and `up` again
 * today's, or a rollback would leave a function that neither release wrote. What the function does is proved by the
 * guard's own tests, which run on today's schema.
 */
let before: OldTestDatabase;
let latest: TestDatabase;

const routeEvents = async (database: TestDatabase): Promise<string> => {
  const { rows } = await sql<{ def: string }>`select pg_get_functiondef(
    'roster_route_events(boolean, uuid, text, timestamptz, boolean, text, json, uuid)'::regprocedure) as def`.execute(
    database.db,
  );
  return rows[0]?.def ?? "";
};

beforeAll(async () => {
  before = await createTestDatabase({ migrated: "0045-statement-client-check" });
  latest = await createTestDatabase();
});
afterAll(async () => {
  await before?.close();
  await latest?.close();
});

describe("0046-guard-statements", () => {
  it("changes the routing function, and down and up again give back each release's function exactly", async () => {
    const old = await routeEvents(before);
    const today = await routeEvents(latest);
    expect(today).not.toBe(old);
    expect(today).toContain("if deleted > 0 then");
    await guardStatements.down(latest.db as unknown as Kysely<unknown>);
    expect(await routeEvents(latest)).toBe(old);
    await guardStatements.up(latest.db as unknown as Kysely<unknown>);
    expect(await routeEvents(latest)).toBe(today);
  });
});
