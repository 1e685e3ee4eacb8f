import { sql } from "kysely";
import { beforeEach, describe, expect, it } from "vitest";
import { PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { adminCall, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * Which deprovisioning writes wait for each other on the guard's row. A write that may trip the guard takes the row
 * for update, so the window is counted one write at a time; a write of a connection that already holds, or whose
 * guard is off, only shares the row, so a burst of held deactivations does not run one at a time. Another
 * transaction holding the row `for share` stands for a write in flight: a write that shares must pass it, one that
 * may trip must wait for it.
 */
const { t, database } = useTestApp();
let c: SeededClient;
let n = 0;

beforeEach(async () => {
  c = await seedClient(t);
});

async function user(): Promise<string> {
  n += 1;
  const res = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: `l${n}@example.com` });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}
const deactivate = (id: string) =>
  scim(t, c, "PATCH", `/Users/${id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: "replace", path: "active", value: false }],
  });
const configure = async (settings: Record<string, unknown>) => {
  const res = await adminCall(t, "PATCH", `/scimClients/${c.clientId}/deprovisioningGuard`, {
    share_percent: 1,
    min_count: 1,
    window_seconds: 3600,
    ...settings,
  });
  expect(res.statusCode, res.body).toBe(200);
};

/** Resolves when a backend of this database waits for a row lock: a write stuck behind the guard's row. */
async function aWriteWaitsForALock(): Promise<"waits"> {
  for (;;) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'
        and wait_event in ('transactionid', 'tuple')`.execute(database.db);
    if ((rows[0]?.n ?? 0) > 0) return "waits";
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Runs `write` while another transaction holds the connection's guard row for share, and answers what came first:
 * the write's answer, or the write waiting for a lock. The write ends (200) once the share has ended, either way.
 */
async function whileRowShared(write: () => Promise<{ statusCode: number; body: string }>): Promise<"passed" | "waits"> {
  let pending: Promise<{ statusCode: number; body: string }> | undefined;
  const first = await database.db.transaction().execute(async (trx) => {
    await sql`select 1 from deprovisioning_guards where client_id = ${c.clientId} for share`.execute(trx);
    pending = write();
    return Promise.race([pending.then(() => "passed" as const), aWriteWaitsForALock()]);
  });
  const res = await pending;
  expect(res?.statusCode, res?.body).toBe(200);
  return first;
}

describe("the guard row's lock", () => {
  it("a connection that holds does not make its deprovisioning writes wait for each other", async () => {
    await configure({ enabled: true });
    const [a, b, d] = [await user(), await user(), await user()];
    expect((await deactivate(a)).statusCode).toBe(200);
    expect((await deactivate(b)).statusCode).toBe(200);
    const state = await adminCall(t, "GET", `/scimClients/${c.clientId}/deprovisioningGuard`);
    expect(state.json()).toMatchObject({ state: "HOLDING" });
    expect(await whileRowShared(() => deactivate(d))).toBe("passed");
    const held = await adminCall(t, "GET", `/scimClients/${c.clientId}/deprovisioningGuard`);
    expect(held.json()).toMatchObject({ state: "HOLDING", held_events: 2 });
  });

  it("a connection whose guard is off does not either", async () => {
    await configure({ enabled: false });
    const id = await user();
    expect(await whileRowShared(() => deactivate(id))).toBe("passed");
  });

  it("a write that may trip the guard waits for the row, so the window is counted one write at a time", async () => {
    await configure({ enabled: true, min_count: 100 });
    const id = await user();
    expect(await whileRowShared(() => deactivate(id))).toBe("waits");
  });
});
