import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import { checkPoolerSession, openDatabase, quoteIdent } from "../../src/storage/database.js";
import { migrate } from "../../src/storage/migrate.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { createGroup, patchGroup } from "../helpers/groups.js";
import { hasPgBouncer, type PgBouncer, startPgBouncer } from "../helpers/pgbouncer.js";
import { type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";

/**
 * Roster behind PgBouncer in transaction mode with two server connections: every transaction of every pool may land
 * on either, so a named prepared statement or a session setting would break the next transaction that meets it.
 */
describe.skipIf(!hasPgBouncer)("behind a transaction pooler (ROSTER_DATABASE_POOLING=transaction)", () => {
  const serverUrl = inject("databaseUrl");
  const database = `roster_pool_${randomBytes(5).toString("hex")}`;
  let bouncer: PgBouncer;
  let t: TestApp;
  let c: SeededClient;

  async function onServer(sql: string): Promise<void> {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    await client.query(sql);
    await client.end();
  }

  beforeAll(async () => {
    await onServer(`create database ${quoteIdent(database)}`);
    bouncer = await startPgBouncer(serverUrl);
    const opened = openDatabase({ url: bouncer.url(database), pooling: "transaction", poolSize: 8 });
    await checkPoolerSession(opened.db);
    await migrate(opened.db);
    t = await createTestApp({
      database: {
        url: bouncer.url(database),
        schema: "public",
        db: opened.db,
        close: () => opened.close(),
      },
    });
    c = await seedClient(t);
  });

  afterAll(async () => {
    await t?.close();
    await t?.database.close();
    await bouncer?.stop();
    await onServer(`drop database if exists ${quoteIdent(database)} with (force)`);
  });

  it("refuses the session-mode start-up settings, which is why the mode exists", async () => {
    const session = openDatabase({ url: bouncer.url(database), poolSize: 1 });
    await expect(session.db.selectFrom("organizations").select("id").execute()).rejects.toThrow(/startup parameter/);
    await session.close();
  });

  it("serves concurrent SCIM writes and reads, the hot prepared reads included", async () => {
    const created = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: `pool-${i}@example.com`, active: true }),
      ),
    );
    expect(created.map((r) => r.statusCode)).toEqual(Array(24).fill(201));
    const ids = created.map((r) => r.json().id as string);

    // Repeated executions of the statements that session mode sends as named prepared statements.
    for (let round = 0; round < 3; round++) {
      const reads = await Promise.all([
        ...ids.map((id) => scim(t, c, "GET", `/Users/${id}`)),
        ...ids.slice(0, 6).map((_, i) => scim(t, c, "GET", `/Users?filter=userName eq "pool-${i}@example.com"`)),
        scim(t, c, "GET", "/Users?startIndex=1&count=10"),
      ]);
      expect(reads.map((r) => r.statusCode)).toEqual(Array(reads.length).fill(200));
    }

    const patched = await Promise.all(
      ids.map((id, i) =>
        scim(t, c, "PATCH", `/Users/${id}`, {
          schemas: [PATCH_OP],
          Operations: [{ op: "replace", value: { title: `t${i}` } }],
        }),
      ),
    );
    expect(patched.map((r) => r.statusCode)).toEqual(Array(ids.length).fill(200));
    expect(patched[5]?.json().title).toBe("t5");
  });

  it("walks a cursor listing and changes group memberships", async () => {
    const group = await createGroup(t, c, "Pooled");
    const users = await scim(t, c, "GET", "/Users?count=100");
    const ids = (users.json().Resources as { id: string }[]).map((u) => u.id);
    const added = await patchGroup(t, c, group.id, [
      { op: "add", path: "members", value: ids.map((value) => ({ value })) },
    ]);
    expect(added.statusCode).toBeLessThan(300);

    const seen: string[] = [];
    let cursor = "";
    for (;;) {
      const page = await scim(t, c, "GET", `/Users?count=5&cursor=${encodeURIComponent(cursor)}`);
      expect(page.statusCode).toBe(200);
      seen.push(...(page.json().Resources as { id: string }[]).map((u) => u.id));
      const next = page.json().nextCursor as string | undefined;
      if (next === undefined) break;
      cursor = next;
    }
    expect(seen.sort()).toEqual([...ids].sort());
    const read = await scim(t, c, "GET", `/Groups/${group.id}`);
    expect((read.json().members as unknown[]).length).toBe(ids.length);
  });
});
