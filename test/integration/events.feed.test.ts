import { beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/platform/clock.js";
import { uuidv7 } from "../../src/platform/ids.js";
import { adminCall, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { DIRECTORY_CHANGE_KINDS, FEED_WAIT } from "../helpers/events.js";
import { useTestApp } from "../helpers/suite.js";
import { GROUP_SCHEMA, USER_SCHEMA } from "../helpers/constants.js";

const DAY_MS = 24 * 60 * 60 * 1000;
const { t, receiver } = useTestApp({
  clock: new ManualClock(Date.parse("2026-03-01T00:00:00Z")),
  webhooks: true,
  hooks: true,
});
let plain: SeededClient;

beforeAll(async () => {
  plain = await seedClient(t);
});

interface FeedEvent {
  id: string;
  event: string;
  organization_id: string;
  directory_id: string;
  create_time: string;
  data: { id: string; raw: Record<string, unknown> };
}

// The directory's changes unless a test names kinds: connection events of the seeded clients are not what it counts.
const feed = async (query: string) =>
  adminCall(t, "GET", `/events?${query}${query.includes("event=") ? "" : `&event=${DIRECTORY_CHANGE_KINDS}`}`);
async function page(query: string): Promise<{ events: FeedEvent[]; next_after: string }> {
  const res = await feed(query);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}
/**
 * The page of `query` once it holds at least `count` events. The feed hands out an event only when no transaction
 * anywhere on the server could still commit an earlier one (gap-free), so a reader polls, as this does: another
 * test file's long transaction on the same server delays what a single read would see.
 */
async function pageWith(query: string, count: number): Promise<{ events: FeedEvent[]; next_after: string }> {
  await expect.poll(async () => (await page(query)).events.length, FEED_WAIT).toBeGreaterThanOrEqual(count);
  return page(query);
}
const createUser = async (c: SeededClient, userName: string) => {
  const res = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName });
  expect(res.statusCode).toBe(201);
  return res.json().id as string;
};

describe("every directory change is an event", () => {
  it("records events for a client without a webhook, with the change's data and time", async () => {
    const id = await createUser(plain, "no-hook@example.com");
    const { events } = await pageWith(`organization_id=${plain.organizationId}`, 1);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      event: "user.created",
      organization_id: plain.organizationId,
      directory_id: plain.clientId,
      create_time: t.clock.now().toISOString(),
      data: { id, email: "no-hook@example.com", raw: { userName: "no-hook@example.com" } },
    });
    expect((await adminCall(t, "GET", `/events/${events[0]?.id}`)).json()).toEqual(events[0]);
  });

  it("records nothing for a refused write", async () => {
    const c = await seedClient(t);
    await createUser(c, "taken@example.com");
    const again = await scim(t, c, "POST", "/Users", {
      schemas: [USER_SCHEMA],
      userName: "taken@example.com",
    });
    expect(again.statusCode).toBe(409);
    expect((await pageWith(`organization_id=${c.organizationId}`, 1)).events.map((e) => e.event)).toEqual([
      "user.created",
    ]);
  });

  it("gives a webhook's event the same id as its webhook-id", async () => {
    const c = await seedClient(t, { webhook: { url: receiver.url, secret: "whsec_feed_0123456789abcdef" } });
    await createUser(c, "hooked@example.com");
    await t.webhooks.dispatcher.drain();
    const { events } = await pageWith(`organization_id=${c.organizationId}`, 1);
    expect(events.map((e) => e.id)).toEqual([receiver.received.at(-1)?.headers["webhook-id"]]);
    expect(receiver.received.at(-1)?.json).toMatchObject({ id: events[0]?.id, created_at: events[0]?.create_time });
  });
});

describe("the feed", () => {
  let c: SeededClient;
  let other: SeededClient;
  beforeAll(async () => {
    c = await seedClient(t);
    // A second directory of the same organization.
    const second = await adminCall(t, "POST", "/scimClients", {
      organization_id: c.organizationId,
      secret: "s-0123456789abcdef",
    });
    expect(second.statusCode).toBe(201);
    other = {
      ...c,
      clientId: second.json().client_id,
      secret: "s-0123456789abcdef",
      base: `/scim/${second.json().client_id}/v2`,
      headers: { authorization: "Bearer s-0123456789abcdef", "content-type": "application/scim+json" },
    };
    for (let i = 0; i < 12; i++) await createUser(c, `page-${i}@example.com`);
    const g = await scim(t, other, "POST", "/Groups", {
      schemas: [GROUP_SCHEMA],
      displayName: "Other",
    });
    expect(g.statusCode).toBe(201);
  });

  it("pages in commit order with next_after, and an empty page keeps the token", async () => {
    const seen: FeedEvent[] = [];
    let after = "";
    const sizes: number[] = [];
    for (;;) {
      const p = await page(`organization_id=${c.organizationId}&page_size=5${after === "" ? "" : `&after=${after}`}`);
      sizes.push(p.events.length);
      seen.push(...p.events);
      if (p.events.length === 0) {
        expect(p.next_after).toBe(after);
        break;
      }
      after = p.next_after;
    }
    expect(sizes).toEqual([5, 5, 3, 0]);
    expect(seen.map((e) => e.event)).toEqual([...Array.from({ length: 12 }, () => "user.created"), "group.created"]);
    expect(seen.slice(0, 12).map((e) => e.data.raw.userName)).toEqual(
      Array.from({ length: 12 }, (_, i) => `page-${i}@example.com`),
    );
    // What happens next is on the next page of the same token.
    await createUser(c, "later@example.com");
    expect(
      (await page(`organization_id=${c.organizationId}&after=${after}`)).events.map((e) => e.data.raw.userName),
    ).toEqual(["later@example.com"]);
  });

  it("filters by directory and by event kinds", async () => {
    const byDirectory = await page(`organization_id=${c.organizationId}&directory_id=${other.clientId}`);
    expect(byDirectory.events.map((e) => e.event)).toEqual(["group.created"]);
    const byKind = await page(`organization_id=${c.organizationId}&event=group.created,group.deleted`);
    expect(byKind.events.map((e) => e.directory_id)).toEqual([other.clientId]);
    const none = await page(`organization_id=${c.organizationId}&directory_id=${other.clientId}&event=user.created`);
    expect(none.events).toEqual([]);
  });

  it("after=now answers no events and a token for what happens from now on", async () => {
    const now = await page(`organization_id=${c.organizationId}&after=now`);
    expect(now.events).toEqual([]);
    expect((await page(`organization_id=${c.organizationId}&after=${now.next_after}`)).events).toEqual([]);
    await createUser(c, "after-now@example.com");
    const next = await pageWith(`organization_id=${c.organizationId}&after=${now.next_after}`, 1);
    expect(next.events.map((e) => e.data.raw.userName)).toEqual(["after-now@example.com"]);
  });

  it("answers 410 FAILED_PRECONDITION for a token older than the retention, and prunes old events", async () => {
    const fresh = await seedClient(t);
    await createUser(fresh, "old@example.com");
    const { next_after } = await page(`organization_id=${fresh.organizationId}`);
    t.clock.advance(31 * DAY_MS);
    const expired = await feed(`organization_id=${fresh.organizationId}&after=${next_after}`);
    expect(expired.statusCode).toBe(410);
    expect(expired.json().error).toMatchObject({ code: 410, status: "FAILED_PRECONDITION" });
    expect(expired.json().error.message).toContain("after=now");
    // The retention prune (hourly, with the event log's) deletes events past 30 days.
    expect(await t.webhooks.feed.prune()).toBeGreaterThan(0);
    expect((await page(`organization_id=${fresh.organizationId}`)).events).toEqual([]);
  });
});

describe("feed errors", () => {
  it("refuses bad tokens, page sizes, kinds and organizations in the admin error body", async () => {
    const org = plain.organizationId;
    for (const [query, status] of [
      ["", 400],
      [`organization_id=${org}&after=not-a-token`, 400],
      [`organization_id=${org}&after=${Buffer.from("v1.x.1.1").toString("base64url")}`, 400],
      [`organization_id=${org}&page_size=0`, 400],
      [`organization_id=${org}&page_size=1001`, 400],
      [`organization_id=${org}&page_size=ten`, 400],
      [`organization_id=${org}&event=user.exploded`, 400],
      [`organization_id=${uuidv7()}`, 404],
      ["organization_id=not-a-uuid", 404],
    ] as const) {
      const res = await feed(query);
      expect(res.statusCode, query).toBe(status);
      expect(res.json().error.code, query).toBe(status);
    }
    expect((await adminCall(t, "GET", `/events/${uuidv7()}`)).statusCode).toBe(404);
    expect((await adminCall(t, "GET", "/events/nope")).statusCode).toBe(404);
    expect((await t.request({ method: "GET", url: `/v2alpha1/admin/events?organization_id=${org}` })).statusCode).toBe(
      401,
    );
  });
});
