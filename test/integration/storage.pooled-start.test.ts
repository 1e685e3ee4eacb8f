import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import { createServerDatabase, type ServerDatabase } from "../helpers/database.js";
import { hasPgBouncer, type PgBouncer, startPgBouncer } from "../helpers/pgbouncer.js";
import { isReady, type RosterProcess, spawnRoster } from "../helpers/roster-process.js";

/**
 * Instances started together behind PgBouncer in transaction mode, with two server connections for three of them:
 * a migration lock held by a session would be taken on one server connection and released (or not) on another,
 * and stay on an idle pooled one. Each start must find the database migrated — by itself or by another — and open
 * its port within seconds, on an empty database as on a migrated one.
 */
const INSTANCES = 3;
/**
 * Not the one-hour lock timeout a held session lock meant: three starts at once take a few seconds on a quiet 2-core
 * machine, and up to a minute and more when it is shared by many test runs.
 */
const READY_WITHIN_MS = 120_000;

describe.skipIf(!hasPgBouncer)("instances started together behind a transaction pooler", () => {
  let bouncer: PgBouncer;
  let database: ServerDatabase;
  const started: RosterProcess[] = [];

  beforeAll(async () => {
    database = await createServerDatabase();
    bouncer = await startPgBouncer(inject("databaseUrl"));
  });

  afterAll(async () => {
    await Promise.all(started.map((r) => r.stop()));
    await bouncer?.stop();
    await database?.drop();
  });

  async function startTogether(): Promise<{ instances: RosterProcess[]; ms: number }> {
    const name = new URL(database.url).pathname.slice(1);
    const began = Date.now();
    const results = await Promise.allSettled(
      Array.from({ length: INSTANCES }, () =>
        spawnRoster(
          {
            ROSTER_DATABASE_URL: bouncer.url(name),
            ROSTER_DATABASE_POOLING: "transaction",
            ROSTER_HOST: "127.0.0.1",
            // Where a start stopped, if one does.
            ROSTER_LOG_LEVEL: "info",
          },
          READY_WITHIN_MS,
        ),
      ),
    );
    const ms = Date.now() - began;
    const instances = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    started.push(...instances);
    const failures = results.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
    expect(failures).toEqual([]);
    return { instances, ms };
  }

  async function stopAll(instances: RosterProcess[]): Promise<void> {
    await Promise.all(instances.map((r) => r.stop()));
    started.length = 0;
  }

  // The first start finds an empty database (one instance migrates); the second finds it migrated (none waits).
  it.each([
    ["on an empty database: one migrates, all open their port and are ready", "empty database"],
    ["on a migrated database: nothing waits on a lock, all are ready", "migrated database"],
  ])(
    "%s",
    async (_title, label) => {
      const { instances, ms } = await startTogether();
      process.stdout.write(`pooled start, ${label}: ${INSTANCES} instances ready in ${ms} ms\n`);
      expect(instances).toHaveLength(INSTANCES);
      for (const r of instances) expect(await isReady(r.url)).toBe(true);
      await stopAll(instances);
    },
    READY_WITHIN_MS + 30_000,
  );
});
