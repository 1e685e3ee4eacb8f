import { beforeAll, describe, expect, it } from "vitest";
import { USER_SCHEMA } from "../helpers/constants.js";
import { FEED_WAIT } from "../helpers/events.js";
import { adminCall, scim } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";
import { kinds } from "../helpers/webhook-receiver.js";

const { t, receiver } = useTestApp({ receiver: true });

beforeAll(async () => {
  receiver.knows("all");
  await t.deliver();
});

interface FeedEvent {
  id: string;
  event: string;
  source: string;
  directory_id: string | null;
}

describe("a connection's own events", () => {
  it("are in the feed for every reader with their source, outlive the connection, and are not sent to its webhook", async () => {
    const c = await t.seed();
    const res = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "first@example.com" });
    expect(res.statusCode, res.body).toBe(201);
    expect((await adminCall(t, "DELETE", `/scimClients/${c.clientId}`)).statusCode).toBe(200);

    // The feed hands out an event once every older transaction of the server has ended: poll, bounded.
    let events: FeedEvent[] = [];
    await expect
      .poll(async () => {
        const feed = await adminCall(t, "GET", `/events?organization_id=${c.organizationId}`);
        expect(feed.statusCode, feed.body).toBe(200);
        events = feed.json().events as FeedEvent[];
        return events.length;
      }, FEED_WAIT)
      .toBe(4);
    expect(events[0]).toMatchObject({ event: "connection.created", source: "admin" });
    expect(
      events
        .slice(1, 3)
        .map((e) => `${e.event}/${e.source}`)
        .sort(),
    ).toEqual(["connection.activated/scim", "user.created/scim"]);
    expect(events[3]).toMatchObject({ event: "connection.deleted", source: "admin" });
    expect(events.every((e) => e.directory_id === c.clientId)).toBe(true);
    // Nothing reaches the webhook: the connection's own events are not sent, and its outbox went with it.
    expect(kinds(await t.deliver())).toEqual([]);
  });

  it("the webhook of a connection carries its directory's changes and not the connection's own events", async () => {
    const c = await t.seed();
    const res = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "second@example.com" });
    expect(res.statusCode, res.body).toBe(201);
    expect(kinds(await t.deliver())).toEqual(["user.created"]);
  });
});
