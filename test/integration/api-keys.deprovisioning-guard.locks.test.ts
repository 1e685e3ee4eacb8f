import { sql, type Transaction } from "kysely";
import type { Database } from "../../src/storage/schema.js";
import { beforeEach, describe, expect, it, vi } from "vitest";
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
 * Runs `write` while another transaction holds the connection's guard row (`for share` or `for update`), and answers
 * what came first: the write's answer, or the write waiting for a lock. `meanwhile` runs in that transaction once the
 * race is decided (a release ending the hold, say). The write ends (200) once the lock is released, either way.
 */
async function whileRowLocked(
  mode: "share" | "update",
  write: () => Promise<{ statusCode: number; body: string }>,
  meanwhile: (trx: Transaction<Database>) => Promise<unknown> = async () => undefined,
): Promise<"passed" | "waits"> {
  let pending: Promise<{ statusCode: number; body: string }> | undefined;
  const first = await database.db.transaction().execute(async (trx) => {
    await sql`select 1 from deprovisioning_guards where client_id = ${c.clientId} for ${sql.raw(mode)}`.execute(trx);
    pending = write();
    const raced = await Promise.race([pending.then(() => "passed" as const), aWriteWaitsForALock()]);
    await meanwhile(trx);
    return raced;
  });
  const res = await pending;
  expect(res?.statusCode, res?.body).toBe(200);
  return first;
}
const whileRowShared = (write: () => Promise<{ statusCode: number; body: string }>) => whileRowLocked("share", write);

/**
 * The connection tripped, with one held event of `id` (as a held deactivation leaves it: a held event is only ever
 * written with a write of its user's row, so the row's version moves too, and no instance's remembered document
 * of the user is current).
 */
async function holdOne(id: string): Promise<void> {
  await sql`update identities set version = version + 1 where id = ${id}`.execute(database.db);
  await sql`insert into deprovisioning_guards (client_id, tripped_time) values (${c.clientId}, now())
    on conflict (client_id) do update set tripped_time = now()`.execute(database.db);
  await sql`insert into held_events (id, client_id, organization_id, event, ordering_key, data, create_time)
    values (gen_random_uuid(), ${c.clientId}, ${c.organizationId}::uuid, 'user.updated', ${id}, '{}', now())`.execute(
    database.db,
  );
}
const rename = (id: string, displayName: string) =>
  scim(t, c, "PATCH", `/Users/${id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: "replace", path: "displayName", value: displayName }],
  });
/** Where the `user.updated` event of `id` carrying `displayName` is: in the feed, or held. */
async function whereIs(id: string, displayName: string): Promise<{ feed: number; held: number }> {
  const { rows } = await sql<{ feed: number; held: number }>`select
    (select count(*)::int from directory_events where event = 'user.updated' and data::jsonb->>'id' = ${id}
      and data like ${`%${displayName}%`}) as feed,
    (select count(*)::int from held_events where ordering_key = ${id}
      and data like ${`%${displayName}%`}) as held`.execute(database.db);
  return rows[0] ?? { feed: -1, held: -1 };
}

describe("the guard row's lock", () => {
  it("a connection that holds does not make its deprovisioning writes wait for each other", async () => {
    await configure({ enabled: true });
    const [a, b, d] = [await user(), await user(), await user()];
    expect((await deactivate(a)).statusCode).toBe(200);
    expect((await deactivate(b)).statusCode).toBe(200);
    const state = await adminCall(t, "GET", `/scimClients/${c.clientId}/deprovisioningGuard`);
    expect(state.json()).toMatchObject({ state: "HOLDING" });
    // The trip's warning is claimed after the tripping write's answer (an update of the row): once it is, nothing
    // but the write below can wait for the row.
    await vi.waitFor(async () => {
      const { rows } = await sql<{ warned: boolean }>`select warned from deprovisioning_guards
        where client_id = ${c.clientId}`.execute(database.db);
      expect(rows[0]?.warned).toBe(true);
    });
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
  it("a write held behind a held event of its user takes the row too: a release ending the hold waits for it", async () => {
    const [x, y] = [await user(), await user()];
    await holdOne(x);
    // The other user's write holds nothing and takes no lock.
    expect(await whileRowLocked("update", () => rename(y, "Flows"))).toBe("passed");
    expect(await whileRowLocked("update", () => rename(x, "Held"))).toBe("waits");
    expect(await whereIs(y, "Flows")).toEqual({ feed: 1, held: 0 });
    expect(await whereIs(x, "Held")).toEqual({ feed: 0, held: 1 });
  });

  it("a write that waited for a release which ended the hold flows: it sees the guard row as the release left it", async () => {
    const x = await user();
    await holdOne(x);
    const release = async (trx: Transaction<Database>) => {
      await sql`delete from held_events where client_id = ${c.clientId}`.execute(trx);
      await sql`update deprovisioning_guards set tripped_time = null where client_id = ${c.clientId}`.execute(trx);
    };
    expect(await whileRowLocked("update", () => rename(x, "After release"), release)).toBe("waits");
    expect(await whereIs(x, "After release")).toEqual({ feed: 1, held: 0 });
  });
});
