import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openDatabase } from "../../src/storage/database.js";
import { migrate } from "../../src/storage/migrate.js";
import { createTestApp, createTestDatabase, type TestApp, type TestDatabase } from "../helpers/app.js";
import { createServerDatabase, type ServerDatabase } from "../helpers/database.js";
import { type DbProxy, startDbProxy } from "../helpers/db-proxy.js";
import { hasPgBouncer, type PgBouncer, startPgBouncer } from "../helpers/pgbouncer.js";
import { adminCall, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { USER_SCHEMA } from "../helpers/constants.js";

/**
 * A database that accepts a connection and then answers nothing — a black-holed network, or PgBouncer holding every
 * query while it has no server — must not hold requests until a statement timeout, the pooler's own timeout or the
 * end of the outage: every request answers 503 with Retry-After within ROSTER_DATABASE_CONNECT_TIMEOUT_MS, and
 * /health/ready answers 503 within 1 s; once the database answers again, so does Roster.
 */
const CONNECT_MS = 2_000;
const TIMEOUTS = { connectMs: CONNECT_MS, statementMs: 30_000, idleInTransactionMs: 60_000 };

/** The proxy in front of the run's PostgreSQL server (its TCP port, or the embedded cluster's Unix socket). */
async function proxyToServer(): Promise<{ proxy: DbProxy; url: (database: string) => string }> {
  const source = new URL(inject("databaseUrl"));
  const socketDir = source.searchParams.get("host");
  const proxy = await startDbProxy(
    socketDir !== null
      ? { path: `${socketDir}/.s.PGSQL.${source.port}` }
      : { host: source.hostname, port: Number(source.port || 5432) },
  );
  const url = (database: string) => {
    const u = new URL(`postgres://127.0.0.1:${proxy.port}/${database}`);
    u.username = source.username;
    u.password = source.password;
    return u.toString();
  };
  return { proxy, url };
}

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await run();
  return { value, ms: Math.round(performance.now() - started) };
}

/** A SCIM write, an admin read and two readiness probes while the database answers nothing. */
async function duringTheOutage(t: TestApp, c: SeededClient): Promise<void> {
  for (const round of [1, 2]) {
    const write = await timed(() =>
      scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: `outage-${round}@example.com` }),
    );
    process.stdout.write(`round ${round}: SCIM write answered ${write.value.statusCode} in ${write.ms} ms\n`);
    expect(write.value.statusCode).toBe(503);
    expect(write.value.headers["retry-after"]).toBe("2");
    expect(write.ms).toBeLessThan(CONNECT_MS);

    const read = await timed(() => adminCall(t, "GET", `/identities?organization_id=${c.organizationId}`));
    expect(read.value.statusCode).toBe(503);
    expect(read.ms).toBeLessThan(CONNECT_MS);

    const ready = await timed(() => t.request({ method: "GET", url: "/health/ready" }));
    process.stdout.write(`round ${round}: /health/ready answered ${ready.value.statusCode} in ${ready.ms} ms\n`);
    expect(ready.value.statusCode).toBe(503);
    expect(ready.ms).toBeLessThan(1_000);
  }
}

async function recovers(t: TestApp, c: SeededClient): Promise<void> {
  const deadline = Date.now() + 10_000;
  let status = 0;
  while (Date.now() < deadline) {
    status = (await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: `back-${Date.now()}@x.com` }))
      .statusCode;
    if (status === 201) break;
  }
  expect(status).toBe(201);
  expect((await t.request({ method: "GET", url: "/health/ready" })).statusCode).toBe(200);
}

/** What a suite opens in front of its database: the proxy an outage is made at, the pool, the app and its client. */
interface Front {
  proxy: DbProxy;
  bouncer?: PgBouncer;
  opened: ReturnType<typeof openDatabase>;
  t: TestApp;
  c: SeededClient;
}

/** The app on a pool of `opened`, with one SCIM client. */
async function appOn(front: Omit<Front, "t" | "c">, database: Omit<TestDatabase, "db">): Promise<Front> {
  const t = await createTestApp({ database: { ...database, db: front.opened.db } });
  return { ...front, t, c: await seedClient(t) };
}

/**
 * Closes a suite's pieces from the front back, the proxy letting everything through first so that no close waits on
 * the outage; `last` closes the database behind them all. A suite whose beforeAll failed closes only `last`.
 */
async function closeSuite(front: Front | undefined, last: () => Promise<unknown> | undefined): Promise<void> {
  await front?.proxy.pass();
  await front?.t.close();
  await front?.opened.close();
  await front?.bouncer?.stop();
  await front?.proxy.close();
  await last();
}

/** Cuts the database off with `cut`, checks the answers during the outage, lets it through and checks recovery. */
async function outageThenRecovery({ t, c, proxy }: Front, cut: (proxy: DbProxy) => unknown): Promise<void> {
  await cut(proxy);
  try {
    await duringTheOutage(t, c);
  } finally {
    await proxy.pass();
  }
  await recovers(t, c);
}

describe("a black-holed database", () => {
  let database: TestDatabase;
  let front: Front;

  beforeAll(async () => {
    database = await createTestDatabase();
    const { proxy, url } = await proxyToServer();
    const opened = openDatabase({
      url: url(new URL(database.url).pathname.slice(1)),
      schema: database.schema,
      poolSize: 4,
      timeouts: TIMEOUTS,
    });
    front = await appOn({ proxy, opened }, database);
  });

  afterAll(() => closeSuite(front, () => database?.close()));

  it("answers 503 within the connect timeout and /health/ready within 1 s, then recovers", async () => {
    await outageThenRecovery(front, (proxy) => proxy.blackhole());
  });
});

describe.skipIf(!hasPgBouncer)("PgBouncer with no server to give", () => {
  let server: ServerDatabase;
  let front: Front;

  beforeAll(async () => {
    server = await createServerDatabase();
    const name = new URL(server.url).pathname.slice(1);
    const direct = openDatabase({ url: server.url, poolSize: 1 });
    await migrate(direct.db);
    await direct.close();
    const { proxy, url } = await proxyToServer();
    const bouncer = await startPgBouncer(url(name));
    const opened = openDatabase({ url: bouncer.url(name), pooling: "transaction", poolSize: 4, timeouts: TIMEOUTS });
    front = await appOn(
      { proxy, bouncer, opened },
      { url: bouncer.url(name), schema: "public", close: async () => {} },
    );
  });

  afterAll(() => closeSuite(front, () => server?.drop()));

  it("answers 503 within the connect timeout while PgBouncer holds the queries, then recovers", async () => {
    await outageThenRecovery(front, (proxy) => proxy.refuse());
  });
});
