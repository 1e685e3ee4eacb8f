import { sql } from "kysely";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { GuardRepo } from "../../src/directory/deprovisioning-guard/repo.js";
import { createIssuedKey, verifyKey } from "../helpers/api-keys.js";
import type { TestApp } from "../helpers/app.js";
import type { Delivery } from "../helpers/webhook-receiver.js";
import { PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { adminCall, type SeededClient, scim } from "../helpers/seed.js";
import { useSecondInstance, useTestApp } from "../helpers/suite.js";

/**
 * The deprovisioning guard, end to end over HTTP with a real webhook receiver: what trips it (both limits, the
 * three IdP deactivation forms and deletions), what a trip holds (events of the feed and webhooks, key effects),
 * what still flows, and an admin's release and discard — on one instance and across two.
 */
const { t } = useTestApp({ receiver: true });
const b = useSecondInstance(t);

let c: SeededClient;
let n = 0;

async function user(client = c): Promise<string> {
  n += 1;
  const res = await scim(t, client, "POST", "/Users", { schemas: [USER_SCHEMA], userName: `p${n}@example.com` });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}
const users = async (count: number) => {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await user());
  return ids;
};
const deactivate = async (id: string, app: TestApp = t) => {
  const res = await scim(app, c, "PATCH", `/Users/${id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: "replace", path: "active", value: false }],
  });
  expect(res.statusCode, res.body).toBe(200);
};
const guard = async (app: TestApp = t) => {
  const res = await adminCall(app, "GET", `/scimClients/${c.clientId}/deprovisioningGuard`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
const configure = async (settings: Record<string, unknown>) => {
  const res = await adminCall(t, "PATCH", `/scimClients/${c.clientId}/deprovisioningGuard`, {
    enabled: true,
    share_percent: 1,
    min_count: 3,
    window_seconds: 3600,
    ...settings,
  });
  expect(res.statusCode, res.body).toBe(200);
};
/**
 * The feed's rows, in feed order. Read from its table rather than the HTTP feed, whose horizon waits for every older
 * transaction of the whole PostgreSQL server (other suites share it); events.feed.test.ts proves the HTTP feed.
 */
const feed = async () => {
  const { rows } = await sql<{ event: string; data: string }>`select event, data from directory_events
    where organization_id = ${c.organizationId} order by txid, seq`.execute(t.db);
  return rows.map((r) => ({ event: r.event, data: JSON.parse(r.data) as { id: string; active?: boolean } }));
};
const deliveredFor = (ds: Delivery[]) => ds.filter((d) => d.body.directory_id === c.clientId);

// The guard's own event is a connection event: this receiver reads every kind.
beforeAll(() => t.receiver.knows("all"));

beforeEach(async () => {
  c = await t.seed();
  await t.deliver();
});

describe("what trips the guard", () => {
  it("trips on the change that exceeds the absolute count, not below it", async () => {
    await configure({ min_count: 3 });
    const ids = await users(6);
    for (const id of ids.slice(0, 3)) await deactivate(id);
    expect(await guard()).toMatchObject({ state: "FLOWING", window_count: 3, held_events: 0 });
    await deactivate(ids[3] as string);
    expect(await guard()).toMatchObject({ state: "HOLDING", window_count: 4, held_events: 1, held_users: 1 });
  });

  it("trips only when the share of active users is exceeded as well", async () => {
    await configure({ min_count: 1, share_percent: 50 });
    const ids = await users(10);
    for (const id of ids.slice(0, 5)) await deactivate(id);
    // 5 of the 10 users active before the window: exactly 50 %, not more.
    expect(await guard()).toMatchObject({ state: "FLOWING", window_count: 5 });
    await deactivate(ids[5] as string);
    expect(await guard()).toMatchObject({ state: "HOLDING", window_count: 6, held_events: 1 });
  });

  it("weighs the window against the organization's active users after the change, inactive users left out", async () => {
    await configure({ min_count: 1, share_percent: 50 });
    const ids = await users(13);
    // Two users inactive from the start (created active, deactivated while the guard is off) count for nothing.
    await configure({ enabled: false, min_count: 1, share_percent: 50 });
    for (const id of ids.slice(11)) await deactivate(id);
    await configure({ min_count: 1, share_percent: 50 });
    const window = async () => (await guard()).window_count as number;
    // 11 active users: the 6th deactivation is 6 of 11, the first above 50 %.
    for (const id of ids.slice(0, 5)) await deactivate(id);
    expect(await guard()).toMatchObject({ state: "FLOWING", window_count: 5 });
    await deactivate(ids[5] as string);
    expect(await guard()).toMatchObject({ state: "HOLDING", held_events: 1 });
    expect(await window()).toBe(6);
  });

  it("counts the three IdP deactivation forms and deletions", async () => {
    await configure({ min_count: 4 });
    const [a, bb, cc, d, e] = await users(5);
    const patch = (id: string, op: Record<string, unknown>) =>
      scim(t, c, "PATCH", `/Users/${id}`, { schemas: [PATCH_OP], Operations: [op] });
    expect((await patch(a as string, { op: "replace", path: "active", value: false })).statusCode).toBe(200);
    expect((await patch(bb as string, { op: "replace", value: { active: false } })).statusCode).toBe(200);
    expect((await patch(cc as string, { op: "Replace", path: "active", value: "False" })).statusCode).toBe(200);
    const put = await scim(t, c, "PUT", `/Users/${d}`, {
      schemas: [USER_SCHEMA],
      userName: "put@example.com",
      active: false,
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(await guard()).toMatchObject({ state: "FLOWING", window_count: 4 });
    expect((await scim(t, c, "DELETE", `/Users/${e}`)).statusCode).toBe(204);
    expect(await guard()).toMatchObject({ state: "HOLDING", window_count: 5, held_events: 1 });
  });

  it("counts only within the window (injected clock), and not when switched off", async () => {
    await configure({ min_count: 2, window_seconds: 60 });
    const ids = await users(6);
    await deactivate(ids[0] as string);
    await deactivate(ids[1] as string);
    t.clock.advance(61_000);
    await deactivate(ids[2] as string);
    expect(await guard()).toMatchObject({ state: "FLOWING", window_count: 1 });
    // Switched off through the SCIM client's own settings (`deprovisioning_guard`), the other fields stay.
    const off = await adminCall(t, "PATCH", `/scimClients/${c.clientId}`, { deprovisioning_guard: { enabled: false } });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json().deprovisioning_guard).toMatchObject({ enabled: false, min_count: 2, window_seconds: 60 });
    for (const id of ids.slice(3)) await deactivate(id);
    expect(await guard()).toMatchObject({ state: "FLOWING", enabled: false, held_events: 0 });
  });
});

describe("settings", () => {
  it("are settings of the SCIM client too: read with it, set by its PATCH (update mask) and create, checked", async () => {
    const read = (await adminCall(t, "GET", `/scimClients/${c.clientId}`)).json();
    expect(read.deprovisioning_guard).toMatchObject({ enabled: true, share_percent: 20, min_count: 50 });
    const masked = await adminCall(
      t,
      "PATCH",
      `/scimClients/${c.clientId}?update_mask=deprovisioning_guard.min_count`,
      {
        deprovisioning_guard: { min_count: 200, share_percent: 5 },
      },
    );
    expect(masked.statusCode, masked.body).toBe(200);
    expect(masked.json().deprovisioning_guard).toMatchObject({ share_percent: 20, min_count: 200 });
    const whole = await adminCall(t, "PATCH", `/scimClients/${c.clientId}?update_mask=deprovisioning_guard`, {
      deprovisioning_guard: { window_seconds: 600 },
    });
    expect(whole.json().deprovisioning_guard).toMatchObject({ min_count: 50, window_seconds: 600 });
    expect(await guard()).toMatchObject({ enabled: true, share_percent: 20, min_count: 50, window_seconds: 600 });
    const bad = await adminCall(t, "PATCH", `/scimClients/${c.clientId}`, {
      deprovisioning_guard: { share_percent: 0 },
    });
    expect(bad.statusCode, bad.body).toBe(400);
    expect(bad.json().error).toMatchObject({ status: "INVALID_ARGUMENT" });
    const created = await adminCall(t, "POST", "/scimClients", {
      organization_id: c.organizationId,
      deprovisioning_guard: { enabled: false },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().deprovisioning_guard).toMatchObject({ enabled: false, min_count: 50 });
  });
});

describe("what a trip holds", () => {
  it("holds events from feed and webhooks and keeps keys valid; other changes flow; a held user's later events wait", async () => {
    await configure({ min_count: 2 });
    const ids = await users(4);
    const [, , held, gone] = ids as [string, string, string, string];
    const heldIssued = await createIssuedKey(t, { organization_id: c.organizationId, actor_id: held });
    const goneIssued = await createIssuedKey(t, { organization_id: c.organizationId, actor_id: gone });
    const [heldKey, goneKey] = [heldIssued.secret as string, goneIssued.secret as string];
    await t.deliver();
    await deactivate(ids[0] as string);
    await deactivate(ids[1] as string);
    await deactivate(held);
    expect((await scim(t, c, "DELETE", `/Users/${gone}`)).statusCode).toBe(204);
    // The IdP's view: the user is inactive, the deleted one is gone.
    expect((await scim(t, c, "GET", `/Users/${held}`)).json().active).toBe(false);
    expect((await scim(t, c, "GET", `/Users/${gone}`)).statusCode).toBe(404);
    // A later change of a held user waits behind its deactivation; a new user flows.
    const rename = await scim(t, c, "PATCH", `/Users/${held}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "displayName", value: "Still Held" }],
    });
    expect(rename.statusCode, rename.body).toBe(200);
    const fresh = await user();

    const events = await feed();
    const kinds = events.map((e) => `${e.event}:${e.data.id ?? ""}`);
    expect(kinds).toContain(`user.created:${fresh}`);
    expect(kinds.filter((k) => k.startsWith("api_key."))).toEqual([]);
    expect(kinds.filter((k) => k.startsWith("user.updated") || k.startsWith("user.deleted"))).toEqual([
      `user.updated:${ids[0]}`,
      `user.updated:${ids[1]}`,
    ]);
    expect(events.map((e) => e.event)).toContain("connection.deprovisioning_held");
    const delivered = deliveredFor(await t.deliver()).map((d) => d.event);
    expect(delivered).toEqual(["user.updated", "user.updated", "connection.deprovisioning_held", "user.created"]);
    expect(await verifyKey(t, heldKey)).toMatchObject({ valid: true });
    expect(await verifyKey(t, goneKey)).toMatchObject({ valid: true });
    const state = await guard();
    expect(state).toMatchObject({ state: "HOLDING", held_events: 3, held_users: 2, held_users_still_inactive: 2 });
    expect(state.held_sample.map((u: { id: string }) => u.id).sort()).toEqual([held, gone].sort());
    const client = (await adminCall(t, "GET", `/scimClients/${c.clientId}`)).json();
    expect(client.deprovisioning_guard).toMatchObject({ state: "HOLDING", held_events: 3 });
    const metrics = await t.request({ method: "GET", url: "/metrics" });
    expect(metrics.body).toMatch(/roster_deprovisioning_held_events [1-9]/);

    // Release: 409 for a stale count, then every held event in order, keys suspended and revoked.
    const stale = await adminCall(t, "POST", `/scimClients/${c.clientId}:releaseHeldDeprovisioning`, {
      confirm_count: 2,
    });
    expect(stale.statusCode, stale.body).toBe(409);
    const release = await adminCall(t, "POST", `/scimClients/${c.clientId}:releaseHeldDeprovisioning`, {
      confirm_count: 3,
    });
    expect(release.statusCode, release.body).toBe(200);
    expect(release.json()).toEqual({ released: 3 });
    // The key events the held changes would have written come with them, in their place.
    const released = (await feed()).slice(-5);
    expect(released.map((e) => `${e.event}:${e.data.id ?? ""}`)).toEqual([
      `user.updated:${held}`,
      `api_key.suspended:${heldIssued.key_id}`,
      `user.deleted:${gone}`,
      `api_key.revoked:${goneIssued.key_id}`,
      `user.updated:${held}`,
    ]);
    expect(released[1]?.data).toMatchObject({ actor_id: held, state: "SUSPENDED", suspend_reason: "ACTOR_INACTIVE" });
    expect(released[3]?.data).toMatchObject({ actor_id: gone, state: "REVOKED", revoke_reason: "ACTOR_DELETED" });
    const sent = deliveredFor(await t.deliver());
    expect(sent.map((d) => `${d.event}:${d.body.data.id}`)).toEqual(
      released.map((e) => `${e.event}:${e.data.id ?? ""}`),
    );
    expect(sent[3]?.body.data).toEqual(released[3]?.data);
    expect(await verifyKey(t, heldKey)).toMatchObject({ valid: false, reason: "ACTOR_INACTIVE" });
    expect(await verifyKey(t, goneKey)).toMatchObject({ valid: false });
    expect(await guard()).toMatchObject({ state: "FLOWING", held_events: 0, window_count: 0 });
    const audit = await adminCall(t, "GET", "/auditLog?page_size=50");
    expect(audit.body).toContain("releaseHeldDeprovisioning");
  });

  it("discard drops the held events after saying how many held users are still inactive", async () => {
    await configure({ min_count: 1 });
    const ids = await users(3);
    await deactivate(ids[0] as string);
    await deactivate(ids[1] as string);
    await deactivate(ids[2] as string);
    // The IdP admin undoes one of the held deactivations.
    const undo = await scim(t, c, "PATCH", `/Users/${ids[2]}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "active", value: true }],
    });
    expect(undo.statusCode).toBe(200);
    await t.deliver();
    const state = await guard();
    expect(state).toMatchObject({ held_events: 3, held_users: 2, held_users_still_inactive: 1 });
    const res = await adminCall(t, "POST", `/scimClients/${c.clientId}/deprovisioningGuard:discard`, {
      confirm_count: 3,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ discarded: 3, held_users_still_inactive: 1 });
    const audit = await adminCall(t, "GET", "/auditLog?page_size=50");
    expect(audit.body).toContain("scimClients.deprovisioningGuard.discard");
    expect(await guard()).toMatchObject({ state: "FLOWING", held_events: 0 });
    expect(deliveredFor(await t.deliver())).toEqual([]);
    const kinds = (await feed())
      .filter((e) => e.event === "user.updated" || e.event === "connection.deprovisioning_held")
      .map((e) => `${e.event}:${e.data.id}`);
    expect(kinds).toEqual([`user.updated:${ids[0]}`, "connection.deprovisioning_held:undefined"]);
  });
});

describe("retention", () => {
  it("the feed's retention prunes around held events, never them: a release after it still publishes them", async () => {
    await configure({ min_count: 1, window_seconds: 60 });
    const ids = await users(3);
    for (const id of ids) await deactivate(id);
    expect(await guard()).toMatchObject({ state: "HOLDING", held_events: 2 });
    t.clock.advance(400 * 24 * 3600 * 1000);
    expect(await t.webhooks.feed.prune()).toBeGreaterThan(0);
    expect(await guard()).toMatchObject({ state: "HOLDING", held_events: 2, held_users: 2 });
    const res = await adminCall(t, "POST", `/scimClients/${c.clientId}/deprovisioningGuard:release`, {
      confirm_count: 2,
    });
    expect(res.json()).toEqual({ released: 2 });
    const released = (await feed()).filter((e) => e.event === "user.updated").map((e) => e.data.id);
    expect(released).toEqual(ids.slice(1));
  });
});

describe("across instances", () => {
  it("a second instance sees the held state and holds the connection's changes, and the first releases them", async () => {
    await configure({ min_count: 2 });
    const ids = await users(5);
    await deactivate(ids[0] as string, t);
    await deactivate(ids[1] as string, b);
    await deactivate(ids[2] as string, t);
    expect(await guard(b)).toMatchObject({ state: "HOLDING", held_events: 1 });
    await deactivate(ids[3] as string, b);
    expect(await guard(t)).toMatchObject({ state: "HOLDING", held_events: 2 });
    const res = await adminCall(b, "POST", `/scimClients/${c.clientId}/deprovisioningGuard:release`, {
      confirm_count: 2,
    });
    expect(res.json()).toEqual({ released: 2 });
    const order = (await feed()).filter((e) => e.event === "user.updated").map((e) => e.data.id);
    expect(order).toEqual(ids.slice(0, 4));
  });

  it("a release interrupted between batches (a crash) leaves the rest held in order; the next release finishes it", async () => {
    await configure({ min_count: 1 });
    const ids = await users(6);
    for (const id of ids) await deactivate(id, t);
    expect(await guard()).toMatchObject({ state: "HOLDING", held_events: 5 });
    // The first batch of a release that then dies: each batch commits on its own. Each held deactivation is two
    // rows (its event, and the row standing for its keys' events), so 4 rows are 2 events.
    const repo = new GuardRepo(t.db);
    expect(await repo.releaseBatch(c.clientId, 4, t.clock.now())).toBe(2);
    expect(await guard(b)).toMatchObject({ state: "HOLDING", held_events: 3 });
    const res = await adminCall(b, "POST", `/scimClients/${c.clientId}:releaseHeldDeprovisioning`, {
      confirm_count: 3,
    });
    expect(res.json()).toEqual({ released: 3 });
    const order = (await feed()).filter((e) => e.event === "user.updated").map((e) => e.data.id);
    expect(order).toEqual(ids);
    const sent = deliveredFor(await t.deliver()).filter((d) => d.event === "user.updated");
    expect(sent.map((d) => d.body.data.id)).toEqual(ids);
    expect(await guard()).toMatchObject({ state: "FLOWING", held_events: 0 });
  });

  it("a batch boundary between a held deletion and its key row still writes the key's api_key.revoked", async () => {
    await configure({ min_count: 1 });
    const [first, gone] = (await users(2)) as [string, string];
    const key = await createIssuedKey(t, { organization_id: c.organizationId, actor_id: gone });
    await deactivate(first);
    expect((await scim(t, c, "DELETE", `/Users/${gone}`)).statusCode).toBe(204);
    expect(await guard()).toMatchObject({ state: "HOLDING", held_events: 1 });
    const repo = new GuardRepo(t.db);
    // The first batch is the deletion alone (it revokes the key); its key row is the next batch's.
    expect(await repo.releaseBatch(c.clientId, 1, t.clock.now())).toBe(1);
    expect(await verifyKey(t, key.secret as string)).toMatchObject({ valid: false });
    const res = await adminCall(t, "POST", `/scimClients/${c.clientId}/deprovisioningGuard:release`, {
      confirm_count: 0,
    });
    expect(res.json()).toEqual({ released: 0 });
    const tail = (await feed()).slice(-2).map((e) => `${e.event}:${e.data.id}`);
    expect(tail).toEqual([`user.deleted:${gone}`, `api_key.revoked:${key.key_id}`]);
  });
});
