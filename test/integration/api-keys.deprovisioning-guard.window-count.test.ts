import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { beforeEach, describe, expect, it } from "vitest";
import { PATCH_OP } from "../helpers/constants.js";
import { adminCall, configureGuard, createUser, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * The guard keeps its window's count on the connection's guard row and carries it from one counted deactivation to
 * the next (migration 0047-guard-window-counter), instead of counting the whole window each time. Each case makes a
 * count that is carried wrongly trip, or fail to trip, one deactivation away from the exact count.
 */
const { t } = useTestApp();
let c: SeededClient;

beforeEach(async () => {
  c = await seedClient(t);
});

const users = async (count: number): Promise<string[]> => {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await createUser(t, c, {}, `w${i}`)).id as string);
  return ids;
};
const deactivate = async (id: string) => {
  const res = await scim(t, c, "PATCH", `/Users/${id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: "replace", path: "active", value: false }],
  });
  expect(res.statusCode, res.body).toBe(200);
};
const state = async (): Promise<string> => {
  const res = await adminCall(t, "GET", `/scimClients/${c.clientId}/deprovisioningGuard`);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { state: string }).state;
};

describe("the guard's carried window count", () => {
  it("drops the marks that left the window since the last count (injected clock)", async () => {
    await configureGuard(t, c.clientId, { min_count: 2, window_seconds: 60 });
    const [a, d, e, f] = await users(4);
    await deactivate(a as string);
    t.clock.advance(30_000);
    await deactivate(d as string);
    // a leaves the window, d stays in it: 2 with e — not yet more than min_count.
    t.clock.advance(31_000);
    await deactivate(e as string);
    expect(await state()).toBe("FLOWING");
    await deactivate(f as string);
    expect(await state()).toBe("HOLDING");
  });

  it("counts afresh when the window is widened, so marks it had dropped count again", async () => {
    await configureGuard(t, c.clientId, { min_count: 2, window_seconds: 60 });
    const [a, b, d] = await users(3);
    await deactivate(a as string);
    t.clock.advance(61_000);
    await deactivate(b as string);
    await configureGuard(t, c.clientId, { min_count: 2, window_seconds: 3600 });
    // a, b and d are within the hour: 3.
    await deactivate(d as string);
    expect(await state()).toBe("HOLDING");
  });

  it("starts from nothing after a trip ends, as the window does", async () => {
    await configureGuard(t, c.clientId, { min_count: 2, window_seconds: 3600 });
    const [a, b, d, e, f] = await users(5);
    for (const id of [a, b, d]) await deactivate(id as string);
    expect(await state()).toBe("HOLDING");
    const release = await adminCall(t, "POST", `/scimClients/${c.clientId}:releaseHeldDeprovisioning`, {
      confirm_count: 1,
    });
    expect(release.statusCode, release.body).toBe(200);
    expect(await state()).toBe("FLOWING");
    await deactivate(e as string);
    await deactivate(f as string);
    expect(await state()).toBe("FLOWING");
  });

  it("counts afresh when a mark was written that no count took in", async () => {
    await configureGuard(t, c.clientId, { min_count: 2, window_seconds: 3600 });
    const [a, b] = await users(2);
    await deactivate(a as string);
    // What a write leaves that took the guard row's shared lock and found the guard untripped and enabled (it had
    // read it tripped, or switched off, just before an admin changed it): a mark flagged uncounted.
    await sql`insert into deprovisioning_marks (client_id, mark_time, uncounted)
      values (${c.clientId}, ${t.clock.now()}, true)`.execute(t.db);
    await deactivate(b as string);
    expect(await state()).toBe("HOLDING");
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from deprovisioning_marks
      where client_id = ${c.clientId} and uncounted`.execute(t.db);
    expect(rows[0]?.n).toBe(0);
  });

  it("stays exact under concurrent deactivations: the one past min_count trips, every later one is held", async () => {
    await configureGuard(t, c.clientId, { min_count: 10, window_seconds: 3600 });
    const ids = await users(20);
    await Promise.all(ids.map((id) => deactivate(id)));
    const res = await adminCall(t, "GET", `/scimClients/${c.clientId}/deprovisioningGuard`);
    // 10 flowed; the 11th tripped the guard and was held, as were the 9 after it.
    expect(res.json()).toMatchObject({ state: "HOLDING", window_count: 20, held_users: 10 });
    const { rows } = await sql<{ window_count: number }>`select window_count from deprovisioning_guards
      where client_id = ${c.clientId}`.execute(t.db);
    expect(rows[0]?.window_count).toBe(11);
  });

  it("reads the marks that left the window, not the whole window, on each counted deactivation", async () => {
    await configureGuard(t, c.clientId, { min_count: 1_000_000, window_seconds: 3600 });
    const [a, b] = await users(2);
    await sql`insert into deprovisioning_marks (client_id, mark_time)
      select ${c.clientId}, ${t.clock.now()}::timestamptz - interval '1 minute' from generate_series(1, 20000)`.execute(
      t.db,
    );
    // The first count reads the window; the next carries it. The second deactivation's batch goes to the guard's
    // function as the write's statement sends it, in a transaction whose own statistics tell what it read.
    await deactivate(a as string);
    const read = await t.db.transaction().execute(async (trx) => {
      const marksRead = async () => {
        const { rows } = await sql<{ n: string }>`select
            (select coalesce(sum(pg_stat_get_xact_tuples_returned(i.indexrelid)), 0) from pg_index i
              where i.indrelid = 'deprovisioning_marks'::regclass)
            + (select coalesce(seq_tup_read, 0) from pg_stat_xact_user_tables
              where relid = 'deprovisioning_marks'::regclass) as n`.execute(trx);
        return Number(rows[0]?.n ?? 0);
      };
      const before = await marksRead();
      const batch = JSON.stringify([
        { id: randomUUID(), event: "api_key.suspended", orderingKey: b, data: "{}", body: null, keyActor: b },
      ]);
      await sql`select * from roster_route_events(true, ${c.organizationId}::uuid, ${c.clientId}::text,
        ${t.clock.now()}::timestamptz, false, null::text, ${batch}::json, ${randomUUID()}::uuid)`.execute(trx);
      return (await marksRead()) - before;
    });
    expect(read).toBeLessThan(100);
    const guard = await adminCall(t, "GET", `/scimClients/${c.clientId}/deprovisioningGuard`);
    expect(guard.json()).toMatchObject({ state: "FLOWING", window_count: 20002 });
  });
});
