import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { verifyWebhookSignature } from "../../src/webhooks/verify.js";
import { createIssuedKey, rawKey } from "../helpers/api-keys.js";
import { PATCH_OP, PRODUCT, TENANT, USER_SCHEMA, WEBHOOK_SECRET } from "../helpers/constants.js";
import { FEED_WAIT } from "../helpers/events.js";
import { adminCall, clientIn, type SeededClient, scim } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";
import { type Delivery, kinds } from "../helpers/webhook-receiver.js";

const { t: e, c, receiver } = useTestApp({ receiver: true });

interface FeedEvent {
  id: string;
  event: string;
  directory_id: string | null;
  source: string;
  data: Record<string, unknown>;
}

let n = 0;
const unique = (prefix: string) => `${prefix}-${++n}-${Math.random().toString(36).slice(2, 8)}`;

/** The feed's events of the organization (every kind), oldest first. */
async function feed(organizationId = c.organizationId, query = ""): Promise<FeedEvent[]> {
  const res = await adminCall(e, "GET", `/events?organization_id=${organizationId}&page_size=1000${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().events as FeedEvent[];
}

/**
 * The feed's events about user `id` (its own and its keys') once their kinds are `expected`: the feed hands out an
 * event once every older transaction of the server has ended, so it is polled, bounded.
 */
async function eventsOf(id: string, expected: string[], organizationId = c.organizationId): Promise<FeedEvent[]> {
  let events: FeedEvent[] = [];
  await expect
    .poll(async () => {
      events = (await feed(organizationId)).filter((x) => x.data.id === id || x.data.actor_id === id);
      return events.map((x) => x.event);
    }, FEED_WAIT)
    .toEqual(expected);
  return events;
}

async function createUser(client: SeededClient = c): Promise<string> {
  const res = await scim(e, client, "POST", "/Users", { schemas: [USER_SCHEMA], userName: `${unique("p")}@x.test` });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

const setActive = async (id: string, active: boolean) => {
  const res = await scim(e, c, "PATCH", `/Users/${id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: "replace", path: "active", value: active }],
  });
  expect(res.statusCode, res.body).toBe(200);
};

/** An issued and an imported key acting for `actorId`; their ids in key-id order. */
async function keysFor(actorId: string, organizationId = c.organizationId): Promise<string[]> {
  const issued = await createIssuedKey(e, { name: "laptop", organization_id: organizationId, actor_id: actorId });
  const imported = await adminCall(e, "POST", "/importedApiKeys:batchCreate", {
    requests: [{ raw_key: rawKey(unique("k")), name: "legacy", organization_id: organizationId, actor_id: actorId }],
  });
  expect(imported.statusCode, imported.body).toBe(200);
  return [issued.key_id as string, imported.json().results[0].imported_api_key.key_id as string].sort();
}

const keyEvents = (events: readonly FeedEvent[]) => events.filter((x) => x.event.startsWith("api_key."));
const keyDeliveries = (ds: readonly Delivery[]) => ds.filter((d) => d.event.startsWith("api_key."));

beforeAll(() => receiver.knows("all"));
beforeEach(async () => {
  await e.deliver();
});

describe("deprovisioning through SCIM announces each API key it changes", () => {
  it("a deactivation is one api_key.suspended per live key of the user, in the feed and as signed webhooks", async () => {
    const ada = await createUser();
    const bob = await createUser();
    const [first, second] = await keysFor(ada);
    const revoked = await createIssuedKey(e, { name: "old", organization_id: c.organizationId, actor_id: ada });
    expect((await adminCall(e, "DELETE", `/issuedApiKeys/${revoked.key_id as string}`)).statusCode).toBe(200);
    const expired = await createIssuedKey(e, {
      name: "expired",
      organization_id: c.organizationId,
      actor_id: ada,
      expire_time: new Date(e.clock.now().getTime() - 1000).toISOString(),
    });
    await keysFor(bob);
    await e.deliver();

    await setActive(ada, false);

    const events = (
      await eventsOf(ada, ["user.created", "api_key.revoked", "user.updated", "api_key.suspended", "api_key.suspended"])
    ).slice(2);
    const suspended = keyEvents(events);
    expect(suspended.map((x) => x.data.id)).toEqual([first, second]);
    expect(suspended.map((x) => x.data.id)).not.toContain(expired.key_id);
    for (const x of suspended) {
      expect(x).toMatchObject({ directory_id: c.clientId, source: "scim" });
      expect(x.data).toMatchObject({
        organization_id: c.organizationId,
        actor_id: ada,
        state: "SUSPENDED",
        suspend_reason: "ACTOR_INACTIVE",
      });
    }
    expect(suspended[0]?.data).toEqual({
      id: first,
      kind: expect.stringMatching(/^(issued|imported)$/),
      organization_id: c.organizationId,
      name: expect.any(String),
      actor_id: ada,
      state: "SUSPENDED",
      suspend_reason: "ACTOR_INACTIVE",
    });

    const delivered = await e.deliver();
    expect(kinds(delivered)).toEqual(["user.updated", "api_key.suspended", "api_key.suspended"]);
    const hooks = keyDeliveries(delivered);
    // The webhook carries the feed's events: same ids, same data, the usual envelope, signed over the raw bytes.
    expect(hooks.map((d) => d.webhookId)).toEqual(suspended.map((x) => x.id));
    for (const [i, d] of hooks.entries()) {
      expect(Object.keys(d.body)).toEqual(["directory_id", "event", "tenant", "product", "data", "id", "created_at"]);
      expect(d.body).toMatchObject({ directory_id: c.clientId, tenant: TENANT, product: PRODUCT, id: d.webhookId });
      expect(d.body.data).toEqual(suspended[i]?.data);
      expect(d.body.created_at).toBe(e.clock.now().toISOString());
      const header = d.received.headers["service-signature"] as string;
      expect(verifyWebhookSignature(WEBHOOK_SECRET, header, d.received.rawBody)).toBe(true);
    }
  });

  it("an inactive user's further changes, and its re-activation, announce no key event", async () => {
    const ada = await createUser();
    await keysFor(ada);
    await setActive(ada, false);
    await setActive(ada, false);
    const res = await scim(e, c, "PATCH", `/Users/${ada}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "displayName", value: "Ada" }],
    });
    expect(res.statusCode, res.body).toBe(200);
    await setActive(ada, true);
    await eventsOf(ada, [
      "user.created",
      "user.updated",
      "api_key.suspended",
      "api_key.suspended",
      "user.updated",
      "user.updated",
    ]);
  });

  it("a deletion is one api_key.revoked per key it revoked, after the user.deleted", async () => {
    const ada = await createUser();
    const keys = await keysFor(ada);
    await e.deliver();

    expect((await scim(e, c, "DELETE", `/Users/${ada}`)).statusCode).toBe(204);

    const events = (await eventsOf(ada, ["user.created", "user.deleted", "api_key.revoked", "api_key.revoked"])).slice(
      1,
    );
    const revoked = keyEvents(events);
    expect(revoked.map((x) => x.data.id)).toEqual(keys);
    const key = (await adminCall(e, "GET", `/issuedApiKeys/${keys.find((k) => k === revoked[0]?.data.id)}`)).json();
    for (const x of revoked) {
      expect(x).toMatchObject({ directory_id: c.clientId, source: "scim" });
      expect(x.data).toMatchObject({ actor_id: ada, state: "REVOKED", revoke_reason: "ACTOR_DELETED" });
      expect(x.data.revoke_time).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/));
    }
    if (key.revoke_time !== undefined) expect(revoked.map((x) => x.data.revoke_time)).toContain(key.revoke_time);

    const delivered = await e.deliver();
    expect(kinds(delivered)).toEqual(["user.deleted", "api_key.revoked", "api_key.revoked"]);
    expect(keyDeliveries(delivered).map((d) => d.body.data)).toEqual(revoked.map((x) => x.data));
  });

  it("an organization whose keys do not follow their identity announces nothing about keys", async () => {
    const org = await adminCall(e, "POST", "/organizations", { name: unique("org"), keys_follow_identity: false });
    expect(org.statusCode, org.body).toBe(201);
    const other = await clientIn(e, org.json().id as string);
    const ada = await createUser(other);
    await keysFor(ada, other.organizationId);
    const res = await scim(e, other, "PATCH", `/Users/${ada}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "active", value: false }],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await scim(e, other, "DELETE", `/Users/${ada}`)).statusCode).toBe(204);
    await eventsOf(ada, ["user.created", "user.updated", "user.deleted"], other.organizationId);
  });
});

describe("a key revoked through the admin API", () => {
  it("is an api_key.revoked of the organization, source admin, in the feed only; revoking again adds nothing", async () => {
    const key = await createIssuedKey(e, { name: "ci", organization_id: c.organizationId, actor_id: "svc-ci" });
    await e.deliver();

    const res = await adminCall(e, "DELETE", `/issuedApiKeys/${key.key_id as string}`);
    expect(res.statusCode, res.body).toBe(200);
    expect((await adminCall(e, "DELETE", `/issuedApiKeys/${key.key_id as string}`)).statusCode).toBe(200);

    const events = await eventsOf("svc-ci", ["api_key.revoked"]);
    expect(events[0]).toMatchObject({ event: "api_key.revoked", directory_id: null, source: "admin" });
    expect(events[0]?.data).toEqual({
      id: key.key_id,
      kind: "issued",
      organization_id: c.organizationId,
      name: "ci",
      actor_id: "svc-ci",
      state: "REVOKED",
      revoke_reason: "ADMIN",
      revoke_time: res.json().revoke_time,
    });
    expect((await adminCall(e, "GET", `/events/${events[0]?.id}`)).json()).toEqual(events[0]);
    // A connection's webhook carries its connection's events: this one concerns none.
    expect(await e.deliver()).toEqual([]);
    // Nor does a filter by connection hand it out.
    expect((await feed(c.organizationId, `&directory_id=${c.clientId}`)).map((x) => x.id)).not.toContain(events[0]?.id);
  });

  it("a key of no organization has no feed to be announced in, and revokes as before", async () => {
    const key = await createIssuedKey(e, { name: "global" });
    const res = await adminCall(e, "DELETE", `/issuedApiKeys/${key.key_id as string}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ state: "REVOKED", revoke_reason: "ADMIN" });
  });
});
