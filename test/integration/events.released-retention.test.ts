import { sql } from "kysely";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { pruneEvents } from "../../src/events/repo.js";
import { PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { FEED_WAIT } from "../helpers/events.js";
import { openExplainer, planOf } from "../helpers/query-spy.js";
import { adminCall, type SeededClient, scim } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * The feed's retention counts from when an event entered the feed: events a deprovisioning guard held longer than the
 * retention period (30 days) stay in the feed for that period from their release, and a reader's token after them
 * reads on (docs/deprovisioning.md, docs/events.md). Time moves by the app's injected clock.
 */
const DAY_MS = 24 * 60 * 60 * 1000;
const { t } = useTestApp({ receiver: true, queries: true });
let explainer: pg.Client;

beforeAll(async () => {
  explainer = await openExplainer(t.database);
});
afterAll(async () => {
  await explainer.end();
});

async function heldDeactivations(c: SeededClient, count: number): Promise<string[]> {
  const guard = await adminCall(t, "PATCH", `/scimClients/${c.clientId}/deprovisioningGuard`, {
    enabled: true,
    share_percent: 1,
    min_count: 1,
    window_seconds: 60,
  });
  expect(guard.statusCode, guard.body).toBe(200);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: `r${i}@example.com` });
    expect(res.statusCode, res.body).toBe(201);
    ids.push(res.json().id as string);
  }
  for (const id of ids) {
    const res = await scim(t, c, "PATCH", `/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "active", value: false }],
    });
    expect(res.statusCode, res.body).toBe(200);
  }
  return ids;
}

/** The connection's deactivations in the feed's table, in feed order (the HTTP feed waits on the whole server). */
async function deactivationsInFeed(c: SeededClient): Promise<string[]> {
  const { rows } = await sql<{ data: string }>`select data from directory_events
    where directory_id = ${c.clientId} and event = 'user.updated' order by txid, seq`.execute(t.db);
  return rows.map((r) => (JSON.parse(r.data) as { id: string }).id);
}

describe("retention of released events", () => {
  it("keeps events held longer than the retention for the retention period from their release", async () => {
    const c = await t.seed();
    const ids = await heldDeactivations(c, 3);
    const changedAt = t.clock.now().toISOString();
    const state = await adminCall(t, "GET", `/scimClients/${c.clientId}/deprovisioningGuard`);
    expect(state.json()).toMatchObject({ state: "HOLDING", held_events: 2 });

    t.clock.advance(31 * DAY_MS);
    // What flowed before the hold (the first deactivation) is past the retention; held events are not in the feed.
    expect(await t.webhooks.feed.prune()).toBeGreaterThan(0);
    expect(await deactivationsInFeed(c)).toEqual([]);
    const release = await adminCall(t, "POST", `/scimClients/${c.clientId}/deprovisioningGuard:release`, {
      confirm_count: 2,
    });
    expect(release.json()).toEqual({ released: 2 });
    // The next prune, right after the release, leaves the released events.
    await t.webhooks.feed.prune();
    expect(await deactivationsInFeed(c)).toEqual(ids.slice(1));

    // A reader gets them with their changes' time, and its token after them reads on instead of answering 410.
    const query = `organization_id=${c.organizationId}&directory_id=${c.clientId}&event=user.updated`;
    const page = async (after = "") => adminCall(t, "GET", `/events?${query}${after === "" ? "" : `&after=${after}`}`);
    await vi.waitFor(async () => expect((await page()).json().events).toHaveLength(2), FEED_WAIT);
    const first = (await page()).json();
    expect(first.events.map((e: { data: { id: string } }) => e.data.id)).toEqual(ids.slice(1));
    expect(first.events.map((e: { create_time: string }) => e.create_time)).toEqual([changedAt, changedAt]);
    const next = await page(first.next_after);
    expect(next.statusCode, next.body).toBe(200);
    expect(next.json().events).toEqual([]);

    // Retention counts from the release: kept 29 days after it, pruned past 30.
    t.clock.advance(29 * DAY_MS);
    await t.webhooks.feed.prune();
    expect(await deactivationsInFeed(c)).toEqual(ids.slice(1));
    t.clock.advance(2 * DAY_MS);
    expect(await t.webhooks.feed.prune()).toBeGreaterThanOrEqual(2);
    expect(await deactivationsInFeed(c)).toEqual([]);
  });

  it("prunes through the BRIN index on when events entered the feed", async () => {
    const before = t.queries.queries.length;
    await pruneEvents(t.queries.db, new Date(0));
    const prune = t.queries.queries.slice(before).find((q) => q.sql.includes("delete from directory_events"));
    expect(prune).toBeDefined();
    const plan = await planOf(explainer, prune ?? { sql: "", parameters: [] });
    expect(plan).toContain("directory_events_feed_time_idx");
    expect(plan).not.toContain("Seq Scan");
  });
});
