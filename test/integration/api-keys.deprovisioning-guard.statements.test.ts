import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as guardStatements from "../../src/storage/migrations/0046-guard-statements.js";
import * as guardWindowCounter from "../../src/storage/migrations/0047-guard-window-counter.js";
import { createTestDatabase, type OldTestDatabase, type TestDatabase } from "../helpers/database.js";

/**
 * Migrations that rewrite the guard's routing function in place: 0046-guard-statements (two statements it ran for
 * every deprovisioning batch now run only when needed) and 0047-guard-window-counter (the window's count kept on the
 * guard row). Each one's `down` must give back the function the migration before it left, and `up` again its own,
 * or a rollback would leave a function that neither release wrote. What the function does is proved by the guard's
 * own tests, which run on today's schema.
 */
const MIGRATIONS = [
  {
    name: "0046-guard-statements",
    previous: "0045-statement-client-check",
    module: guardStatements,
    marker: "if deleted > 0 then",
  },
  {
    name: "0047-guard-window-counter",
    previous: "0046-guard-statements",
    module: guardWindowCounter,
    marker: "g.window_count + deprov - count(*)",
  },
] as const;

const databases = new Map<string, OldTestDatabase | TestDatabase>();

const routeEvents = async (database: TestDatabase): Promise<string> => {
  const { rows } = await sql<{ def: string }>`select pg_get_functiondef(
    'roster_route_events(boolean, uuid, text, timestamptz, boolean, text, json, uuid)'::regprocedure) as def`.execute(
    database.db,
  );
  return rows[0]?.def ?? "";
};

beforeAll(async () => {
  for (const m of MIGRATIONS) {
    for (const name of [m.previous, m.name]) {
      if (!databases.has(name)) databases.set(name, await createTestDatabase({ migrated: name }));
    }
  }
});
afterAll(async () => {
  for (const d of databases.values()) await d.close();
});

describe.each(MIGRATIONS)("$name", ({ name, previous, module, marker }) => {
  it("changes the routing function, and down and up again give back each release's function exactly", async () => {
    const before = databases.get(previous) as TestDatabase;
    const after = databases.get(name) as TestDatabase;
    const old = await routeEvents(before);
    const today = await routeEvents(after);
    expect(today).not.toBe(old);
    expect(old).not.toContain(marker);
    expect(today).toContain(marker);
    await module.down(after.db as unknown as Kysely<unknown>);
    expect(await routeEvents(after)).toBe(old);
    await module.up(after.db as unknown as Kysely<unknown>);
    expect(await routeEvents(after)).toBe(today);
  });
});
