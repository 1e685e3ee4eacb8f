import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIRECTORY_CHANGE_KINDS, FEED_WAIT } from "../helpers/events.js";
import { legacyToken } from "../../src/events/token.js";
import { ManualClock } from "../../src/platform/clock.js";
import { SecretBox } from "../../src/platform/crypto.js";
import { createTestApp, createTestDatabase, type TestApp, type TestDatabase } from "../helpers/app.js";
import { USER_SCHEMA } from "../helpers/constants.js";
import { adminCall, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { testWebhooks } from "../helpers/webhooks.js";

/**
 * Feed tokens are signed and bound to their organization (docs/events.md): a forged, tampered or foreign token is
 * 400, an unsigned token of the earlier format is read only while it names a position the feed could have issued,
 * and a token signed before a rotation of ROSTER_SECRETS still reads while its key is listed.
 */
const OLD = Buffer.from("old-roster-secret-key-0123456789abcdef");
const NEW = Buffer.from("new-roster-secret-key-0123456789abcdef");
const clock = new ManualClock(Date.parse("2026-03-01T00:00:00Z"));
let database: TestDatabase;
let t: TestApp;
let c: SeededClient;
let other: SeededClient;
const closing: TestApp[] = [];

async function instance(secrets: Buffer[]): Promise<TestApp> {
  const webhooks = testWebhooks(database.db, clock, { box: new SecretBox(secrets) });
  const app = await createTestApp({ database, clock, secrets, extra: { webhooks } });
  closing.push(app);
  return app;
}

beforeAll(async () => {
  database = await createTestDatabase();
  t = await instance([OLD]);
  c = await seedClient(t);
  other = await seedClient(t);
});
afterAll(async () => {
  for (const app of closing) await app.close();
  await database.close();
});

const feed = (app: TestApp, org: string, after?: string) =>
  adminCall(
    app,
    "GET",
    `/events?organization_id=${org}&event=${DIRECTORY_CHANGE_KINDS}${after === undefined ? "" : `&after=${after}`}`,
  );
const createUser = async (userName: string) => {
  const res = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName });
  expect(res.statusCode, res.body).toBe(201);
};
const expect400 = (res: Awaited<ReturnType<typeof feed>>, what: string) => {
  expect(res.statusCode, `${what}: ${res.body}`).toBe(400);
  expect(res.json().error.status, what).toBe("INVALID_ARGUMENT");
};

describe("signed feed tokens", () => {
  it("a token of the feed pages on; after=now keeps working", async () => {
    await createUser("token-1@example.com");
    // The feed hands out an event once every older transaction of the server has ended: poll, bounded.
    let first = await feed(t, c.organizationId);
    await expect
      .poll(async () => {
        first = await feed(t, c.organizationId);
        expect(first.statusCode).toBe(200);
        return first.json().events.length;
      }, FEED_WAIT)
      .toBe(1);
    const token = first.json().next_after as string;
    await createUser("token-2@example.com");
    const emails = async () =>
      (await feed(t, c.organizationId, token)).json().events.map((e: { data: { email: string } }) => e.data.email);
    await expect.poll(emails, FEED_WAIT).toEqual(["token-2@example.com"]);
    const now = await feed(t, c.organizationId, "now");
    expect(now.statusCode).toBe(200);
    const empty = await feed(t, c.organizationId, now.json().next_after);
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toEqual({ events: [], next_after: now.json().next_after });
  });

  it("refuses a forged, tampered or foreign token with 400", async () => {
    const token = (await feed(t, c.organizationId, "now")).json().next_after as string;
    const bytes = Buffer.from(token, "base64url");
    const tampered = Buffer.from(bytes);
    // The seq field: a position far ahead, with the old MAC.
    tampered.writeBigUInt64BE(2n ** 40n, 9);
    const forged = Buffer.from(bytes);
    forged.fill(7, 25);
    expect400(await feed(t, c.organizationId, tampered.toString("base64url")), "tampered position");
    expect400(await feed(t, c.organizationId, forged.toString("base64url")), "forged MAC");
    expect400(await feed(t, other.organizationId, token), "another organization's token");
    expect((await feed(t, c.organizationId, token)).statusCode).toBe(200);
  });

  it("reads a legacy unsigned token only within what was issued, and answers a signed one", async () => {
    await createUser("legacy@example.com");
    const now = clock.now().getTime();
    const start = legacyToken({ txid: "0", seq: 0, timeMs: now - 1000 });
    let read = await feed(t, c.organizationId, start);
    await expect
      .poll(async () => {
        read = await feed(t, c.organizationId, start);
        expect(read.statusCode, read.body).toBe(200);
        return read.json().events.length;
      }, FEED_WAIT)
      .toBeGreaterThan(0);
    expect(read.json().next_after).not.toBe(start);
    expect((await feed(t, c.organizationId, read.json().next_after)).statusCode).toBe(200);
    expect400(await feed(t, c.organizationId, legacyToken({ txid: "999999999999", seq: 1, timeMs: now })), "far txid");
    expect400(await feed(t, c.organizationId, legacyToken({ txid: "1", seq: 10 ** 12, timeMs: now })), "far seq");
    const future = legacyToken({ txid: "0", seq: 0, timeMs: now + 3600_000 });
    expect400(await feed(t, c.organizationId, future), "future time");
  });

  it("a token signed with an older key of ROSTER_SECRETS still verifies; without that key it is 400", async () => {
    const token = (await feed(t, c.organizationId, "now")).json().next_after as string;
    const rotated = await instance([NEW, OLD]);
    const read = await feed(rotated, c.organizationId, token);
    expect(read.statusCode, read.body).toBe(200);
    // Answered re-signed with the first key, so the consumer moves to it.
    expect(read.json().next_after).not.toBe(token);
    expect((await feed(rotated, c.organizationId, read.json().next_after)).statusCode).toBe(200);
    const retired = await instance([NEW]);
    expect400(await feed(retired, c.organizationId, token), "retired key");
    expect((await feed(retired, c.organizationId, read.json().next_after)).statusCode).toBe(200);
  });
});
