import { sql } from "kysely";
import { beforeEach, describe, expect, it } from "vitest";
import { PATCH_OP } from "../helpers/constants.js";
import {
  adminCall,
  clientIn,
  configureGuard,
  createUser,
  type SeededClient,
  scim,
  seedClient,
} from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * While a connection's guard holds, each write of a user is held behind an earlier held change of that user; the
 * statement of a write that deprovisions nothing tests for one. A write made on the document this instance
 * remembers from its own last write of the user, by the same connection, whose events flowed, leaves the test out:
 * a held event is only ever written with a write of the user's row, and the statement is guarded by the version that
 * write left; nor does a creation, whose new user has no held event. Any other write tests: after a held write,
 * after another connection's write (its holds are not this connection's), after a read of the row.
 */
const { t } = useTestApp({ queries: true });
let c: SeededClient;

beforeEach(async () => {
  c = await seedClient(t);
  await configureGuard(t, c.clientId, { min_count: 1, share_percent: 1 });
});

const user = async (): Promise<string> => (await createUser(t, c, {}, "r")).id as string;
const patchAs = async (client: SeededClient, id: string, value: Record<string, unknown>) => {
  t.queries.reset();
  const res = await scim(t, client, "PATCH", `/Users/${id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: "replace", value }],
  });
  expect(res.statusCode, res.body).toBe(200);
  // Whether the user's write tested for a held event of the user (a connection's first request writes an event of
  // its own, which is not the user's).
  const writes = t.queries.queries.filter((q) => /update identities/.test(q.sql));
  expect(writes.length).toBeGreaterThan(0);
  return writes.some((q) => q.sql.includes("roster_holds_any"));
};
const rename = (id: string, displayName: string, client = c) => patchAs(client, id, { displayName });
/** The displayNames of `id`'s `user.updated` events in the feed, in feed order. */
const published = async (id: string) => {
  const { rows } = await sql<{ data: string }>`select data from directory_events
    where event = 'user.updated' and data::jsonb->>'id' = ${id} order by txid, seq`.execute(t.db);
  return rows.map((r) => (JSON.parse(r.data) as { raw: { displayName?: string } }).raw.displayName ?? null);
};
const heldOf = async (client: SeededClient) => {
  const res = await adminCall(t, "GET", `/scimClients/${client.clientId}/deprovisioningGuard`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { state: string; held_events: number };
};

/** Trips the connection's guard by deactivating two fresh users: the second deactivation is held (one event). */
async function trip(): Promise<void> {
  for (const id of [await user(), await user()]) await patchAs(c, id, { active: false });
  expect(await heldOf(c)).toMatchObject({ state: "HOLDING", held_events: 1 });
}

/** A user created before the trip whose deactivation, after it, this connection holds. */
async function heldUser(): Promise<string> {
  const id = await user();
  await trip();
  await patchAs(c, id, { active: false });
  return id;
}

describe("the hold test of a remembered write", () => {
  it("is left out after this connection's write flowed, a creation's included, and the event still flows", async () => {
    t.queries.reset();
    const id = await user();
    // A new user has no held event to wait behind: its creation does not test for one either.
    const creation = t.queries.queries.filter((q) => /insert into identities/.test(q.sql));
    expect(creation.length).toBe(1);
    expect(creation.some((q) => q.sql.includes("roster_holds_any"))).toBe(false);
    await trip();
    expect(await rename(id, "One")).toBe(false);
    expect(await rename(id, "Two")).toBe(false);
    expect(await published(id)).toEqual(["One", "Two"]);
    expect(await heldOf(c)).toMatchObject({ held_events: 1 });
  });

  it("is made after a held write, which keeps the user's later writes held", async () => {
    const id = await heldUser();
    expect(await heldOf(c)).toMatchObject({ held_events: 2 });
    expect(await rename(id, "Waits")).toBe(true);
    expect(await rename(id, "Waits too")).toBe(true);
    expect(await published(id)).toEqual([]);
    expect(await heldOf(c)).toMatchObject({ held_events: 4 });
  });

  it("is made by a connection after another connection's write: that one's flow says nothing of this one's holds", async () => {
    const other = await clientIn(t, c.organizationId);
    const id = await heldUser();
    // The other connection's guard holds nothing: its write flows and leaves the remembered version.
    expect(await rename(id, "Other", other)).toBe(true);
    expect(await rename(id, "Other again", other)).toBe(false);
    // This connection still holds the user's deactivation: its write tests, and is held behind it.
    expect(await rename(id, "Held here", c)).toBe(true);
    expect(await published(id)).toEqual(["Other", "Other again"]);
    expect(await heldOf(c)).toMatchObject({ held_events: 3 });
  });

  it("is made again once the holds are released, and then left out", async () => {
    const id = await heldUser();
    const { held_events } = await heldOf(c);
    const released = await adminCall(t, "POST", `/scimClients/${c.clientId}/deprovisioningGuard:release`, {
      confirm_count: held_events,
    });
    expect(released.statusCode, released.body).toBe(200);
    expect(await rename(id, "After")).toBe(true);
    expect(await rename(id, "After again")).toBe(false);
    expect((await published(id)).slice(-2)).toEqual(["After", "After again"]);
  });
});
