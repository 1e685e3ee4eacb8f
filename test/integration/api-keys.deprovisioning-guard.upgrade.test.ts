import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIssuedKey, verifyKey } from "../helpers/api-keys.js";
import { createTestApp, type ReceiverApp } from "../helpers/app.js";
import { PATCH_OP, PRODUCT, TENANT, USER_SCHEMA } from "../helpers/constants.js";
import * as heldPlans from "../../src/storage/migrations/0038-held-plans.js";
import * as heldBatches from "../../src/storage/migrations/0041-held-batches.js";
import * as statementClientCheck from "../../src/storage/migrations/0045-statement-client-check.js";
import { createTestDatabase, type OldTestDatabase } from "../helpers/database.js";
import { adminCall, type SeededClient, scim } from "../helpers/seed.js";

/**
 * A deprovisioning hold that spans the upgrade past 0032-held-key-events: changes held before it were stored without
 * the rows that stand for their `api_key.*` events. After 0033-released-events their release writes those events in
 * their place all the same, as for a change held since (docs/deprovisioning.md). The app runs on a database migrated to
 * 0032; a change held before 0032 is one whose key rows are deleted from `held_events`. Today's writes ask a tripped
 * connection's held rows through a function of 0038-held-plans and hold through one of 0041-held-batches, write a
 * user's `manager_id` and `modified_hour` as plain columns (0044-written-derived-columns) and check the connection
 * of their events with a function of 0045-statement-client-check, which the test adds to the old schema while the app
 * writes there and takes away before the upgrade.
 */
let database: OldTestDatabase;
let t: ReceiverApp;
let c: SeededClient;
let n = 0;

beforeAll(async () => {
  database = await createTestDatabase({ migrated: "0032-held-key-events" });
  // Before the app: making its SCIM client writes that client's first event.
  await statementClientCheck.up(database.db as unknown as Kysely<unknown>);
  t = await createTestApp({ database, receiver: true });
  await heldPlans.up(t.db as unknown as Kysely<unknown>);
  await heldBatches.up(t.db as unknown as Kysely<unknown>);
  await sql`alter table identities alter column manager_id drop expression,
    add column modified_hour timestamptz`.execute(t.db);
  t.receiver.knows("all");
  c = t.client;
});
afterAll(async () => {
  await t?.close();
  await database?.close();
});

async function userWithKey(): Promise<{ id: string; key: Record<string, unknown> }> {
  n += 1;
  const res = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: `u${n}@example.com` });
  expect(res.statusCode, res.body).toBe(201);
  const id = res.json().id as string;
  return { id, key: await createIssuedKey(t, { organization_id: c.organizationId, actor_id: id }) };
}
const patch = async (id: string, op: Record<string, unknown>) => {
  const res = await scim(t, c, "PATCH", `/Users/${id}`, { schemas: [PATCH_OP], Operations: [op] });
  expect(res.statusCode, res.body).toBe(200);
};
const deactivate = (id: string) => patch(id, { op: "replace", path: "active", value: false });
const keyRows = async () => {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from held_events
    where key_actor is not null or key_id is not null`.execute(t.db);
  return rows[0]?.n ?? 0;
};

describe("a hold across the upgrade past 0032", () => {
  it("releases the changes held before it with their api_key events in their place, and nothing twice", async () => {
    const guard = await adminCall(t, "PATCH", `/scimClients/${c.clientId}/deprovisioningGuard`, {
      share_percent: 1,
      min_count: 1,
    });
    expect(guard.statusCode, guard.body).toBe(200);
    const [first, held, gone, renamed, later] = [
      await userWithKey(),
      await userWithKey(),
      await userWithKey(),
      await userWithKey(),
      await userWithKey(),
    ];
    await t.deliver();
    await deactivate(first.id);
    // Held before the upgrade: a deactivation, a deletion, and a deactivation followed by a change of the inactive
    // user (no change of `active`: no key events).
    await deactivate(held.id);
    expect((await scim(t, c, "DELETE", `/Users/${gone.id}`)).statusCode).toBe(204);
    await deactivate(renamed.id);
    await patch(renamed.id, { op: "replace", path: "displayName", value: "Renamed" });
    expect(await keyRows()).toBe(3);
    await sql`delete from held_events where key_actor is not null or key_id is not null`.execute(t.db);
    // Held after 0032, before 0033: it keeps its key row.
    await deactivate(later.id);
    expect(await keyRows()).toBe(1);

    await statementClientCheck.down(t.db as unknown as Kysely<unknown>);
    await heldBatches.down(t.db as unknown as Kysely<unknown>);
    await heldPlans.down(t.db as unknown as Kysely<unknown>);
    // 0043 adds modified_hour as PostgreSQL computes it; 0044 leaves the plain manager_id as it is.
    await sql`alter table identities drop column modified_hour`.execute(t.db);
    await database.migrateToLatest();
    const state = (await adminCall(t, "GET", `/scimClients/${c.clientId}/deprovisioningGuard`)).json();
    expect(state).toMatchObject({ state: "HOLDING", held_events: 5 });
    await t.deliver();
    const release = await adminCall(t, "POST", `/scimClients/${c.clientId}/deprovisioningGuard:release`, {
      confirm_count: 5,
    });
    expect(release.statusCode, release.body).toBe(200);
    expect(release.json()).toEqual({ released: 5 });

    const { rows } = await sql<{ id: string; event: string; data: string }>`select id, event, data
      from directory_events where directory_id = ${c.clientId} and release_time is not null order by txid, seq`.execute(
      t.db,
    );
    const released = rows.map((r) => ({ ...r, data: JSON.parse(r.data) as Record<string, unknown> }));
    const kinds = released.map((e) => `${e.event}:${e.data.id}`);
    expect(kinds).toEqual([
      `user.updated:${held.id}`,
      `api_key.suspended:${held.key.key_id}`,
      `user.deleted:${gone.id}`,
      `api_key.revoked:${gone.key.key_id}`,
      `user.updated:${renamed.id}`,
      `api_key.suspended:${renamed.key.key_id}`,
      `user.updated:${renamed.id}`,
      `user.updated:${later.id}`,
      `api_key.suspended:${later.key.key_id}`,
    ]);
    expect(released[1]?.data).toMatchObject({
      actor_id: held.id,
      state: "SUSPENDED",
      suspend_reason: "ACTOR_INACTIVE",
    });
    expect(released[3]?.data).toMatchObject({ actor_id: gone.id, state: "REVOKED", revoke_reason: "ACTOR_DELETED" });

    // The webhooks: each of these events once (in order per resource), signed and shaped as any (deliver checks),
    // in the connection's envelope, with the feed's id and data.
    const sent = (await t.deliver()).filter((d) => d.body.directory_id === c.clientId);
    expect(sent.map((d) => d.body.id).sort()).toEqual(released.map((e) => e.id).sort());
    for (const d of sent) {
      const event = released.find((e) => e.id === d.body.id);
      expect(d.body).toMatchObject({ event: event?.event, tenant: TENANT, product: PRODUCT });
      expect(d.body.data).toEqual(event?.data);
    }
    const ofRenamed = (ids: string[]) => ids.filter((id) => released.find((e) => e.id === id)?.data.id === renamed.id);
    expect(ofRenamed(sent.map((d) => d.body.id))).toEqual(ofRenamed(released.map((e) => e.id)));
    expect(await verifyKey(t, held.key.secret as string)).toMatchObject({ valid: false, reason: "ACTOR_INACTIVE" });
    expect(await verifyKey(t, gone.key.secret as string)).toMatchObject({ valid: false });
    expect(await verifyKey(t, first.key.secret as string)).toMatchObject({ valid: false, reason: "ACTOR_INACTIVE" });
  });
});
