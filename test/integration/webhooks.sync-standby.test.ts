import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestApp, type ReceiverApp } from "../helpers/app.js";
import { USER_SCHEMA } from "../helpers/constants.js";
import { activated, scim } from "../helpers/seed.js";
import { kinds } from "../helpers/webhook-receiver.js";
import { STANDBY_TIMEOUTS, type StandbyServer, startStandbyServer } from "../helpers/sync-standby.js";

/**
 * What delays a webhook after a failover under `synchronous_mode_strict` (docs/scaling.md): the new primary answers
 * reads at once while every commit waits for the missing standby. A claim is a commit: it waits, the liveness probe
 * sees it waiting and cuts its connection — but the server keeps the commit waiting and lets it through once the
 * standby is back. Until then the claim's rows look unclaimed and are locked, so a release of the lost claim run
 * during the outage finds nothing. The claim then commits, owned by a live dispatcher, with a 32 s lease (the
 * test's webhook timeout + 30 s), and every event of its resource — also one committed after the recovery — must
 * not wait for that lease: it is delivered within 2 s of the standby's return. The clock is frozen, so a lease
 * never runs out here. The bookkeeping commits synchronously here (Roster's own bookkeeping pool does not wait for
 * the standby: webhooks.sync-standby-async.test.ts), the case where a claim's commit is cut while it waits.
 */

describe("a webhook claim whose commit waits for a missing synchronous standby", () => {
  let server: StandbyServer;
  let admin: pg.Client;
  let t: ReceiverApp;
  let standbyNames: StandbyServer["standbyNames"];
  let commitsWaiting: StandbyServer["commitsWaiting"];
  let waitingCommit: StandbyServer["waitingCommit"];

  /** The outbox rows of the user's events as the server has them: claimed by whom. */
  const outbox = async () =>
    (
      await admin.query<{ event: string; claimed: boolean }>(
        "select event, claim_token is not null as claimed from webhook_outbox order by seq",
      )
    ).rows;

  beforeAll(async () => {
    server = await startStandbyServer();
    ({ admin, standbyNames, commitsWaiting, waitingCommit } = server);
    // Synchronous bookkeeping behind a transaction pooler: the lost claim this test is about.
    const bookkeeping = server.open({ poolSize: 4, timeouts: STANDBY_TIMEOUTS, pooling: "transaction" });
    t = await createTestApp({ database: server.database, receiver: true, webhooks: { bookkeepingDb: bookkeeping.db } });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await server?.stop();
  });

  it("is released once the standby is back, and the resource's later events arrive within 2 s", async () => {
    // The connection's own events first (a successful request activates it), so the claims below hold the user's.
    expect((await scim(t, t.client, "GET", "/Users")).statusCode).toBe(200);
    await activated(t, t.client);
    expect(await t.webhooks.dispatcher.drain()).toBe(2);
    expect(kinds(await t.deliver())).toEqual([]);
    const created = await scim(t, t.client, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "sync@x.com" });
    expect(created.statusCode).toBe(201);
    const id = created.json().id as string;

    await standbyNames("absent_standby");
    const probe = await waitingCommit();
    // The liveness probe sees the claim waiting and cuts it within the connect timeout: its answer is lost, and
    // the server still holds it, waiting. (A claim cut before it reached its commit — the probe's last answer
    // stands for 500 ms — left nothing behind: the dispatcher claims again.)
    await vi.waitFor(
      async () => {
        await expect(t.webhooks.dispatcher.runOnce()).rejects.toThrow();
        expect(await commitsWaiting("with recursive k")).toBe(1);
      },
      { timeout: 30_000, interval: 100 },
    );
    expect(t.receiver.received).toHaveLength(0);
    // The outage goes on: the dispatcher's next round settles what it owes (the lost claim, whose rows look free and
    // are locked by the waiting commit) and claims again (the head is locked: nothing).
    // (A round whose connection start-up the probe cut — the database looks down — is tried again.)
    await vi.waitFor(async () => expect(await t.webhooks.dispatcher.runOnce()).toBe(0), {
      timeout: 30_000,
      interval: 100,
    });
    expect(await commitsWaiting("with recursive k")).toBe(1);

    // The standby is back: every waiting commit goes through, the cut claim's too.
    await standbyNames("");
    await vi.waitFor(async () => expect(await commitsWaiting()).toBe(0), { timeout: 10_000, interval: 20 });
    await probe.commit;
    await probe.client.end();
    const recovered = performance.now();
    expect(await outbox()).toEqual([{ event: "user.created", claimed: true }]);

    const patched = await scim(t, t.client, "PATCH", `/Users/${id}`, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "replace", path: "nickName", value: "after" }],
    });
    expect(patched.statusCode).toBe(200);
    t.webhooks.dispatcher.start();
    await vi.waitFor(() => expect(t.receiver.received).toHaveLength(2), { timeout: 10_000, interval: 20 });
    const ms = Math.round(performance.now() - recovered);
    process.stdout.write(`both events delivered ${ms} ms after the standby came back\n`);
    expect(ms).toBeLessThan(2_000);
    expect(t.receiver.received.map((r) => (r.json as { event: string }).event)).toEqual([
      "user.created",
      "user.updated",
    ]);
    await t.webhooks.dispatcher.stop();
    expect(await outbox()).toEqual([]);
  }, 60_000);
});
