import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { USER_SCHEMA } from "../helpers/constants.js";
import { type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { STANDBY_TIMEOUTS, type StandbyServer, startStandbyServer } from "../helpers/sync-standby.js";

/**
 * A primary that answers every read at once while each commit waits for a synchronous standby that is not there
 * (Patroni's `synchronous_mode_strict` between a failover and the old primary's return) must not hold a write until
 * the standby comes back: the write answers 503 with Retry-After within ROSTER_DATABASE_CONNECT_TIMEOUT_MS, and
 * once commits go through again, so do writes. The cluster is the test's own: its standby setting is the server's.
 */
const CONNECT_MS = STANDBY_TIMEOUTS.connectMs;

describe("a primary whose commits wait for a missing synchronous standby", () => {
  let server: StandbyServer;
  let t: TestApp;
  let c: SeededClient;

  beforeAll(async () => {
    server = await startStandbyServer();
    t = await createTestApp({ database: server.database });
    c = await seedClient(t);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await server?.stop();
  });

  it("answers a write 503 within the connect timeout, then writes again once commits go through", async () => {
    await server.standbyNames("absent_standby");
    const waiting = await server.waitingCommit();
    try {
      for (const round of [1, 2]) {
        const started = performance.now();
        const res = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: `stuck-${round}@x.com` });
        const ms = Math.round(performance.now() - started);
        process.stdout.write(`round ${round}: SCIM write answered ${res.statusCode} in ${ms} ms\n`);
        expect(res.statusCode).toBe(503);
        expect(res.headers["retry-after"]).toBeDefined();
        expect(ms).toBeLessThan(CONNECT_MS);
      }
    } finally {
      await server.standbyNames("");
      // Every waiting commit goes through once no standby is required: the one seen waiting shows it.
      await waiting.commit;
      await waiting.client.end();
    }
    const res = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "after@x.com" });
    expect(res.statusCode).toBe(201);
  }, 30_000);
});
