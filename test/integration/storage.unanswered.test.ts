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

describe("a black-holed database", () => {
  let database: TestDatabase;
  let proxy: DbProxy;
  let opened: ReturnType<typeof openDatabase>;
  let t: TestApp;
  let c: SeededClient;

  beforeAll(async () => {
    database = await createTestDatabase();
    const front = await proxyToServer();
    proxy = front.proxy;
    const url = front.url(new URL(database.url).pathname.slice(1));
    opened = openDatabase({ url, schema: database.schema, poolSize: 4, timeouts: TIMEOUTS });
    t = await createTestApp({ database: { ...database, db: opened.db } });
    c = await seedClient(t);
  });

  afterAll(async () => {
    await proxy?.pass();
    await t?.close();
    await opened?.close();
    await proxy?.close();
    await database?.close();
  });

  it("answers 503 within the connect timeout and /health/ready within 1 s, then recovers", async () => {
    proxy.blackhole();
    try {
      await duringTheOutage(t, c);
    } finally {
      await proxy.pass();
    }
    await recovers(t, c);
  });
});

describe.skipIf(!hasPgBouncer)("PgBouncer with no server to give", () => {
  let server: ServerDatabase;
  let proxy: DbProxy;
  let bouncer: PgBouncer;
  let opened: ReturnType<typeof openDatabase>;
  let t: TestApp;
  let c: SeededClient;

  beforeAll(async () => {
    server = await createServerDatabase();
    const name = new URL(server.url).pathname.slice(1);
    const direct = openDatabase({ url: server.url, poolSize: 1 });
    await migrate(direct.db);
    await direct.close();
    const front = await proxyToServer();
    proxy = front.proxy;
    bouncer = await startPgBouncer(front.url(name));
    opened = openDatabase({ url: bouncer.url(name), pooling: "transaction", poolSize: 4, timeouts: TIMEOUTS });
    t = await createTestApp({
      database: { url: bouncer.url(name), schema: "public", db: opened.db, close: async () => {} },
    });
    c = await seedClient(t);
  });

  afterAll(async () => {
    await proxy?.pass();
    await t?.close();
    await opened?.close();
    await bouncer?.stop();
    await proxy?.close();
    await server?.drop();
  });

  it("answers 503 within the connect timeout while PgBouncer holds the queries, then recovers", async () => {
    await proxy.refuse();
    try {
      await duringTheOutage(t, c);
    } finally {
      await proxy.pass();
    }
    await recovers(t, c);
  });
});
