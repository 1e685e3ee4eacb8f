import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { PATCH_OP } from "../helpers/constants.js";
import { captureLog } from "../helpers/log-capture.js";
import { waitFor } from "../helpers/roster-process.js";
import { configureGuard, createUser, type SeededClient, scim, seedClient } from "../helpers/seed.js";

/**
 * A trip is announced by one WARN line, claimed after commit by the write that tripped (or, if that instance never
 * got to it, by the connection's next deactivation). A deactivation that flowed cannot have tripped, and once the
 * guard row says the trip is announced, the connection's further deactivations see so in their own statement: in
 * neither case is a claim made, so no round trip is spent on it but by the write that tripped.
 */
const TRIPPED = "deprovisioning guard tripped";
let t: TestApp & { queries: { queries: { sql: string }[] } };
let c: SeededClient;
const log = captureLog("warn");

beforeAll(async () => {
  t = (await createTestApp({ queries: true, extra: { logger: log.logger } })) as typeof t;
  c = await seedClient(t);
  await configureGuard(t, c.clientId, { min_count: 2 });
});
afterAll(async () => t?.close());

const user = async (): Promise<string> => (await createUser(t, c, {}, "w")).id as string;
async function deactivate(id: string): Promise<void> {
  const res = await scim(t, c, "PATCH", `/Users/${id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: "replace", path: "active", value: false }],
  });
  expect(res.statusCode, res.body).toBe(200);
}
const warnings = () => log.lines.filter((line) => line.includes(TRIPPED)).length;
const claims = () => t.queries.queries.filter((q) => /set warned = true/.test(q.sql)).length;

describe("the trip's warning", () => {
  it("is logged once per trip, claimed by the write that tripped: flowing deactivations and held ones of an announced trip make no claim", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await user());
    for (const id of ids.slice(0, 3)) await deactivate(id);
    await waitFor("the trip's WARN line", async () => warnings() === 1, 5_000);
    // The two deactivations that flowed made none; the one that tripped (its batch held) made it.
    expect(claims()).toBe(1);

    // Held (with the deactivation that tripped): the trip is announced, so neither deactivation claims it again.
    await deactivate(ids[3] ?? "");
    await deactivate(ids[4] ?? "");
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from held_events
      where client_id = ${c.clientId} and key_actor is null and key_id is null`.execute(t.db);
    expect(rows[0]?.n).toBe(3);

    // An announcement that never happened (its instance stopped after the trip's commit) is made by the next
    // deactivation: its statement sees the trip unannounced.
    await sql`update deprovisioning_guards set warned = false where client_id = ${c.clientId}`.execute(t.db);
    await deactivate(ids[5] ?? "");
    await waitFor("the second WARN line", async () => warnings() === 2, 5_000);
    expect(claims()).toBe(2);
    await deactivate(ids[6] ?? "");
    expect(claims()).toBe(2);
    expect(warnings()).toBe(2);
  });
});
