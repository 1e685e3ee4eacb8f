import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RELEASE_BATCH } from "../../src/directory/deprovisioning-guard/service.js";
import { ADMIN_TOKEN, PATCH_OP, USER_SCHEMA, WEBHOOK_SECRET } from "../helpers/constants.js";
import { createServerDatabase, type ServerDatabase } from "../helpers/database.js";
import { call, type RosterProcess, startRosterProcess, waitFor } from "../helpers/roster-process.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";

/**
 * The deprovisioning guard's held state lives in PostgreSQL: Roster as a child process holds a mass deprovisioning,
 * is killed with SIGKILL in the middle of a release (a batch committed, the next one under way), and is started
 * again. The new process still holds what is left, holds a further deactivation, and its release finishes the job:
 * every held event in the feed exactly once and in order, every one delivered at least once and in order per
 * resource, the key effects applied and their events written.
 */
const ENV = { ROSTER_WEBHOOK_HEARTBEAT_MS: "200" };
const USERS = 50;
const GROUPS = 22;
const DEADLINE_MS = 90_000;

let database: ServerDatabase;
let receiver: WebhookReceiver;
let roster: RosterProcess | undefined;
let db: pg.Client;

beforeAll(async () => {
  database = await createServerDatabase();
  receiver = await startWebhookReceiver("all");
  roster = await startRosterProcess(database.url, ENV);
  db = new pg.Client({ connectionString: database.url });
  await db.connect();
}, 120_000);
afterAll(async () => {
  await db?.end();
  await roster?.stop();
  await receiver?.close();
  await database?.drop();
});

const url = () => {
  if (roster === undefined) throw new Error("Roster is not running");
  return roster.url;
};
const admin = (method: string, path: string, body?: unknown) =>
  call(url(), method, `/v2alpha1/admin${path}`, ADMIN_TOKEN, body);
const query = async <T>(text: string, values: unknown[] = []) => (await db.query(text, values)).rows as T[];

describe("the deprovisioning guard across a kill -9 during a release and a restart", () => {
  it("keeps what a killed release left held, holds more after the restart, and the next release finishes in order", async () => {
    const org = await admin("POST", "/organizations", { name: "Held" });
    const secret = "guard-kill9-scim-secret-0123456789";
    const created = await admin("POST", "/scimClients", {
      organization_id: org.json.id,
      secret,
      deprovisioning_guard: { share_percent: 1, min_count: 1 },
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const clientId = String(created.json.client_id);
    const scim = async (method: string, path: string, body?: unknown) => {
      const res = await call(url(), method, `/scim/${clientId}/v2${path}`, secret, body);
      expect(res.status, JSON.stringify(res.json)).toBeLessThan(300);
      return res.json;
    };
    const guard = async () =>
      (await admin("GET", `/scimClients/${clientId}/deprovisioningGuard`)).json as {
        state: string;
        held_events: number;
      };

    const ids: string[] = [];
    for (let i = 0; i < USERS; i++) {
      ids.push(String((await scim("POST", "/Users", { schemas: [USER_SCHEMA], userName: `k${i}@example.com` })).id));
    }
    const members = ids.map((value) => ({ value }));
    for (let g = 0; g < GROUPS; g++) {
      await scim("POST", "/Groups", {
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
        displayName: `g${g}`,
        members,
      });
    }
    // The webhook from here on: the setup's thousand membership events are the feed's only.
    const hooked = await admin("PATCH", `/scimClients/${clientId}`, {
      webhook: { url: receiver.url, secret: WEBHOOK_SECRET },
    });
    expect(hooked.status, JSON.stringify(hooked.json)).toBe(200);
    const key = async (actor: string) => {
      const res = await admin("POST", "/issuedApiKeys", { name: "k", organization_id: org.json.id, actor_id: actor });
      expect(res.status).toBe(201);
      return String(res.json.key_id);
    };
    const [suspendedKey, revokedKey] = [await key(ids[1] as string), await key(ids[5] as string)];
    const deactivate = (id: string) =>
      scim("PATCH", `/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "replace", path: "active", value: false }],
      });
    // The first deactivation flows; the second trips the guard; every deletion is held with its group events.
    for (const id of ids.slice(0, 5)) await deactivate(id);
    for (const id of ids.slice(5)) await scim("DELETE", `/Users/${id}`);
    const held = await guard();
    expect(held).toMatchObject({ state: "HOLDING", held_users: USERS - 1 });
    const expected = await query<{ id: string; ordering_key: string }>(
      `select id::text, ordering_key from held_events where client_id = $1 and key_actor is null and key_id is null
        order by seq`,
      [clientId],
    );
    expect(expected.length).toBe(held.held_events);
    const rows = Number((await query<{ n: number }>("select count(*)::int as n from held_events"))[0]?.n);
    expect(rows).toBeGreaterThan(2 * RELEASE_BATCH);

    // A lock on a row of the second batch stops the release there: the first batch has committed by then. The
    // killed instance's statement may still commit the second batch once the lock goes; the third stays held.
    const blocker = new pg.Client({ connectionString: database.url });
    await blocker.connect();
    await blocker.query("begin");
    await blocker.query(
      `select 1 from held_events where seq = (select seq from held_events order by seq offset ${RELEASE_BATCH} limit 1)
        for update`,
    );
    const releasing = admin("POST", `/scimClients/${clientId}/deprovisioningGuard:release`, {
      confirm_count: held.held_events,
    }).catch((e: unknown) => e);
    let waiting = 0;
    await waitFor(
      "the release's second batch to wait on the lock",
      async () => {
        const found = await query<{ pid: number }>(
          `select pid from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'
            and query like '%held_events%'`,
        );
        waiting = found[0]?.pid ?? 0;
        return waiting !== 0;
      },
      DEADLINE_MS,
    );
    const leftAtKill = Number((await query<{ n: number }>("select count(*)::int as n from held_events"))[0]?.n);
    expect(leftAtKill).toBe(rows - RELEASE_BATCH);
    await roster?.kill9();
    roster = undefined;
    await blocker.query("rollback");
    await blocker.end();
    // The killed instance's statement, no longer waiting, commits or rolls back whole: wait until it is gone.
    await waitFor(
      "the killed instance's backend to end",
      async () => (await query("select 1 from pg_stat_activity where pid = $1", [waiting])).length === 0,
      DEADLINE_MS,
    );
    expect(await releasing).toBeInstanceOf(Error);

    // Restarted: still holding what is left; a further deactivation is held too.
    roster = await startRosterProcess(database.url, ENV);
    const after = await guard();
    expect(after.state).toBe("HOLDING");
    expect(after.held_events).toBeGreaterThan(0);
    expect(after.held_events).toBeLessThan(held.held_events);
    const metrics = await fetch(`${url()}/metrics`).then((r) => r.text());
    expect(metrics).toContain("roster_deprovisioning_guard_tripped_connections 1");
    const late = String((await scim("POST", "/Users", { schemas: [USER_SCHEMA], userName: "late@example.com" })).id);
    await deactivate(late);
    expect(await guard()).toMatchObject({ state: "HOLDING", held_events: after.held_events + 1 });
    const lateEvent = await query<{ id: string; ordering_key: string }>(
      "select id::text, ordering_key from held_events where ordering_key = $1 and key_actor is null",
      [late],
    );
    expected.push(...lateEvent);

    const release = await admin("POST", `/scimClients/${clientId}/deprovisioningGuard:release`, {
      confirm_count: after.held_events + 1,
    });
    expect(release).toMatchObject({ status: 200, json: { released: after.held_events + 1 } });
    expect(await guard()).toMatchObject({ state: "FLOWING", held_events: 0 });

    // The feed: every held event exactly once, in the order held, each key event after its user's event.
    const feed = await query<{ id: string; event: string; data: string }>(
      `select id::text, event, data from directory_events where directory_id = $1 order by txid, seq`,
      [clientId],
    );
    const wanted = new Set(expected.map((e) => e.id));
    expect(feed.filter((e) => wanted.has(e.id)).map((e) => e.id)).toEqual(expected.map((e) => e.id));
    const keyEvents = feed.filter((e) => e.event.startsWith("api_key."));
    expect(keyEvents.map((e) => `${e.event}:${(JSON.parse(e.data) as { id: string }).id}`)).toEqual([
      `api_key.suspended:${suspendedKey}`,
      `api_key.revoked:${revokedKey}`,
    ]);
    const position = (id: string) => feed.findIndex((e) => e.id === id);
    const userEvent = (user: string) => expected.findLast((e) => e.ordering_key === user)?.id ?? "";
    expect(position(keyEvents[0]?.id ?? "")).toBe(
      position(expected.find((e) => e.ordering_key === ids[1])?.id ?? "") + 1,
    );
    expect(position(keyEvents[1]?.id ?? "")).toBe(position(userEvent(ids[5] as string)) + 1);
    const stateOf = async (keyId: string) => (await admin("GET", `/issuedApiKeys/${keyId}`)).json.state;
    expect([await stateOf(suspendedKey), await stateOf(revokedKey)]).toEqual(["SUSPENDED", "REVOKED"]);

    // The webhooks: every held event at least once, in order per resource (the ordering key).
    await waitFor(
      "every held event's delivery",
      async () => expected.every((e) => receiver.received.some((r) => r.headers["webhook-id"] === e.id)),
      DEADLINE_MS,
    );
    const firstSeen: string[] = [];
    for (const r of receiver.received) {
      const id = String(r.headers["webhook-id"]);
      if (wanted.has(id) && !firstSeen.includes(id)) firstSeen.push(id);
    }
    const keyOf = new Map(expected.map((e) => [e.id, e.ordering_key]));
    const perKey = (order: readonly string[]) => {
      const out = new Map<string, string[]>();
      for (const id of order) out.set(keyOf.get(id) ?? "", [...(out.get(keyOf.get(id) ?? "") ?? []), id]);
      return out;
    };
    expect(perKey(firstSeen)).toEqual(perKey(expected.map((e) => e.id)));
    console.log(
      `kill -9 during a release of ${held.held_events} held events (${rows} rows): ${leftAtKill} rows left at the ` +
        `kill, ${after.held_events} events held after the restart; all ${expected.length} published once, in order`,
    );
  }, 300_000);
});
