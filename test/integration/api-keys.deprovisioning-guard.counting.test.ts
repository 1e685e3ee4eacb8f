import { sql } from "kysely";
import { beforeEach, describe, expect, it } from "vitest";
import { PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { adminCall, configureGuard, createUser, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * What the deprovisioning guard counts is deactivations and deletions: the change that makes an active user
 * inactive, once. IdPs re-send their disabled users (the same `active: false` again, a profile change, a full PUT
 * that keeps `active: false`); such writes neither count towards a trip nor are held, unless an earlier held change
 * of the same user keeps them waiting behind it.
 */
const { t } = useTestApp();
let c: SeededClient;

beforeEach(async () => {
  c = await seedClient(t);
});

const user = async (): Promise<string> => (await createUser(t, c, {}, "k")).id as string;
const patch = async (id: string, op: Record<string, unknown>) => {
  const res = await scim(t, c, "PATCH", `/Users/${id}`, { schemas: [PATCH_OP], Operations: [op] });
  expect(res.statusCode, res.body).toBe(200);
};
const deactivate = (id: string) => patch(id, { op: "replace", path: "active", value: false });
const rename = (id: string, displayName: string) =>
  patch(id, { op: "replace", path: "displayName", value: displayName });
const guard = async () => {
  const res = await adminCall(t, "GET", `/scimClients/${c.clientId}/deprovisioningGuard`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
/** The displayNames of the `user.updated` events of `id` in the feed, in feed order. */
const published = async (id: string) => {
  const { rows } = await sql<{ data: string }>`select data from directory_events
    where event = 'user.updated' and data::jsonb->>'id' = ${id} order by txid, seq`.execute(t.db);
  return rows.map((r) => (JSON.parse(r.data) as { raw: { displayName?: string } }).raw.displayName ?? null);
};

describe("what the guard counts", () => {
  it("a deactivation once: later writes of an inactive user neither count nor wait, unless held behind one", async () => {
    await configureGuard(t, c.clientId, { min_count: 2 });
    const [a, b, d] = [await user(), await user(), await user()];
    await deactivate(a);
    await deactivate(b);
    // What an IdP re-sends of its disabled users: a change with `active: false` again, a profile change, a PUT.
    await patch(a, { op: "replace", value: { active: false, displayName: "Away" } });
    await rename(b, "Still away");
    const put = await scim(t, c, "PUT", `/Users/${a}`, {
      schemas: [USER_SCHEMA],
      userName: "k-put@example.com",
      displayName: "Put while away",
      active: false,
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(await guard()).toMatchObject({ state: "FLOWING", window_count: 2, held_events: 0 });

    await deactivate(d);
    expect(await guard()).toMatchObject({ state: "HOLDING", window_count: 3, held_events: 1 });
    // While holding: a user whose deactivation flowed is written as usual; the held user's change waits behind it.
    await rename(a, "Flows");
    await rename(d, "Waits");
    expect(await guard()).toMatchObject({ state: "HOLDING", window_count: 3, held_events: 2, held_users: 1 });
    expect(await published(a)).toEqual([null, "Away", "Put while away", "Flows"]);
    expect(await published(d)).toEqual([]);
  });
});
