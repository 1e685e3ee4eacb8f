import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { brotliCompress } from "node:zlib";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RequestLogEntry, RequestLogRepo, uuidv7Floor } from "../../src/observability/request-log/repo.js";
import { partitionDays } from "../../src/storage/request-log-partitions.js";
import { createTestDatabase, createTestDatabaseAt, type TestDatabase } from "../helpers/database.js";

/**
 * The request log's rows in daily partitions read back as entries: newest first across days, filtered, paged, one
 * by id with its bodies; a day's partition made on the first write of that day or ahead of it, dropped whole once
 * the day is past the retention; and the entries of older versions (segments, or rows) moved in by the migration.
 */

let database: TestDatabase;
let repo: RequestLogRepo;
beforeAll(async () => {
  database = await createTestDatabase();
  repo = new RequestLogRepo(database.db);
});
afterAll(async () => database.close());

const ORG = "0190c000-0000-7000-8000-0000000000aa";
const DAY = 24 * 3600_000;
const T0 = Date.UTC(2026, 10, 25, 12);
const DAY0 = Math.floor(T0 / DAY);

/** An entry at `T0 + ms`, its id the smallest UUIDv7 of that millisecond (so ids sort as times do). */
function entry(clientId: string, ms: number, fields: Partial<RequestLogEntry> = {}): RequestLogEntry {
  return {
    id: uuidv7Floor(T0 + ms),
    client_id: clientId,
    organization_id: ORG,
    time: new Date(T0 + ms),
    method: "GET",
    path: `/scim/${clientId}/v2/Users/u${ms}`,
    query: "",
    status: 200,
    scim_type: null,
    duration_ms: 1.25,
    resource_id: `u${ms}`,
    request_body: null,
    request_truncated: false,
    response_body: `{"id":"u${ms}"}`,
    response_truncated: false,
    user_agent: "Okta SCIM Client 1.0.0",
    client_ip: "203.0.113.7",
    ...fields,
  };
}

const client = () => `part-${randomBytes(4).toString("hex")}`;
const ids = (entries: readonly { id: string }[]) => entries.map((e) => e.id);
const summary = ({ request_body: _q, response_body: _r, ...rest }: RequestLogEntry) => rest;

describe("the request log's rows", () => {
  it("lists newest first across batches and days, page by page, with every field but the bodies", async () => {
    const c = client();
    // Two instances' batches over the same time, and a batch of the next day.
    await repo.insert([0, 2, 4, 6].map((ms) => entry(c, ms)));
    await repo.insert([1, 3, 5].map((ms) => entry(c, ms)));
    await repo.insert([DAY + 7, DAY + 8].map((ms) => entry(c, ms)));
    const all = [DAY + 8, DAY + 7, 6, 5, 4, 3, 2, 1, 0].map((ms) => entry(c, ms).id);

    const listed = await repo.list(c, {}, undefined, 100);
    expect(ids(listed)).toEqual(all);
    expect(listed[0]).toEqual(summary(entry(c, DAY + 8)));
    const pages: string[][] = [];
    let before: string | undefined;
    for (;;) {
      const page = await repo.list(c, {}, before, 2);
      if (page.length === 0) break;
      pages.push(ids(page));
      before = page.at(-1)?.id;
    }
    expect(pages).toEqual([all.slice(0, 2), all.slice(2, 4), all.slice(4, 6), all.slice(6, 8), all.slice(8)]);
    expect(await repo.list(client(), {}, undefined, 10)).toEqual([]);
  });

  it("filters by status range, method and resource", async () => {
    const c = client();
    await repo.insert([
      entry(c, 10, { status: 201, method: "POST", resource_id: "alice" }),
      entry(c, 11, { status: 404, resource_id: "nobody" }),
      entry(c, 12, { status: 200, method: "PATCH", resource_id: "alice" }),
    ]);
    await repo.insert([
      entry(c, 20, { status: 200 }),
      entry(c, 21, { status: 409, method: "POST", resource_id: null }),
    ]);

    const times = async (filter: Parameters<RequestLogRepo["list"]>[1]) =>
      (await repo.list(c, filter, undefined, 10)).map((e) => e.time.getTime() - T0);
    expect(await times({ status: { min: 400, max: 499 } })).toEqual([21, 11]);
    expect(await times({ status: { min: 201, max: 201 } })).toEqual([10]);
    expect(await times({ method: "POST" })).toEqual([21, 10]);
    expect(await times({ resourceId: "alice" })).toEqual([12, 10]);
    expect(await times({ resourceId: "alice", method: "PATCH" })).toEqual([12]);
    expect(await times({ status: { min: 500, max: 599 } })).toEqual([]);
    const first = await repo.list(c, { method: "POST" }, undefined, 1);
    expect(first.map((e) => e.status)).toEqual([409]);
    expect((await repo.list(c, { method: "POST" }, first[0]?.id, 5)).map((e) => e.status)).toEqual([201]);
  });

  it("reads one entry by id with both bodies as written, and nothing for an unknown id or another client", async () => {
    const c = client();
    const body = '{"userName":"zoë@example.com","note":"李 \\" quoted, {braces}, \\\\ and a NULL"}';
    const written = entry(c, 30, {
      method: "POST",
      request_body: body,
      response_body: null,
      request_truncated: true,
      scim_type: "uniqueness",
      user_agent: null,
      client_ip: null,
    });
    await repo.insert([written, entry(c, 32)]);
    await repo.insert([entry(c, 31, { response_body: "not JSON at all" })]);
    expect(await repo.get(c, written.id)).toEqual(written);
    expect(await repo.get(c, entry(c, 31).id)).toEqual(entry(c, 31, { response_body: "not JSON at all" }));
    expect(await repo.get(c, entry(c, 33).id)).toBeUndefined();
    expect(await repo.get(client(), written.id)).toBeUndefined();
  });

  it("keeps one partition per UTC day, made by the first write of the day", async () => {
    const c = client();
    await repo.insert([entry(c, 5 * DAY), entry(c, 5 * DAY + 1), entry(c, 6 * DAY)]);
    const days = await partitionDays(database.db);
    expect(days).toEqual(expect.arrayContaining([DAY0 + 5, DAY0 + 6]));
    const partitions = await sql<{ name: string; n: number }>`
      select tableoid::regclass::text as name, count(*)::int as n from scim_request_log
       where client_id = ${c} group by 1 order by 1`.execute(database.db);
    expect(partitions.rows).toEqual([
      { name: "scim_request_log_p20261130", n: 2 },
      { name: "scim_request_log_p20261201", n: 1 },
    ]);
  });

  it("drops the partitions of days past the cutoff, creates today's and tomorrow's, and writes on after a drop", async () => {
    const other = new RequestLogRepo(database.db);
    const c = client();
    await repo.insert([entry(c, -30 * DAY), entry(c, -21 * DAY)]);
    await repo.insert([entry(c, -20 * DAY - 1), entry(c, -20 * DAY + 1)]);
    // Another instance prunes: whole days before the cutoff's day go; the cutoff's own day stays whole, an entry
    // just older than the cutoff included.
    const { dropped } = await other.maintainPartitions(T0 + 40 * DAY, T0 - 20 * DAY);
    expect(dropped).toBeGreaterThanOrEqual(2);
    const days = await partitionDays(database.db);
    expect(days[0]).toBe(DAY0 - 20);
    expect(days).toEqual(expect.arrayContaining([DAY0 + 40, DAY0 + 41]));
    expect((await repo.list(c, {}, undefined, 10)).map((e) => e.time.getTime() - T0)).toEqual([
      -20 * DAY + 1,
      -20 * DAY - 1,
    ]);
    const deleted = await sql<{ n: string }>`select n_tup_del::text as n from pg_stat_user_tables
       where relname like 'scim_request_log_p%' and n_tup_del > 0`.execute(database.db);
    expect(deleted.rows).toEqual([]);
    // This repo still believes the dropped day exists: the write recreates it.
    await repo.insert([entry(c, -30 * DAY + 5)]);
    expect(await repo.get(c, entry(c, -30 * DAY + 5).id)).toEqual(entry(c, -30 * DAY + 5));
  });

  it("lets two instances create the same day's partition at once", async () => {
    const [a, b] = [new RequestLogRepo(database.db), new RequestLogRepo(database.db)];
    const c = client();
    await Promise.all([a.insert([entry(c, 90 * DAY)]), b.insert([entry(c, 90 * DAY + 1)])]);
    expect(await repo.list(c, {}, undefined, 10)).toHaveLength(2);
  });
});

describe("the migration to daily partitions", () => {
  const compress = promisify(brotliCompress);
  const old = (c: string) => [
    entry(c, 1, { method: "POST", status: 201, request_body: '{"userName":"Zoë"}', request_truncated: true }),
    entry(c, 2, { status: 404, scim_type: "invalidValue", response_body: null, resource_id: null }),
    ...Array.from({ length: 30 }, (_v, i) => entry(c, DAY + 10 + i, { user_agent: null })),
  ];
  const noIp = (e: RequestLogEntry) => ({ ...e, client_ip: null });

  it("moves the entries of the segments older versions wrote, and puts them in rows on the way down", async () => {
    const legacy = await createTestDatabaseAt("0024-setup-links");
    const db = legacy.db;
    try {
      const c = "from-segments";
      const entries = old(c);
      // Two segments in the format of versions 0017 to 0025: fields as JSON arrays, bodies length-prefixed.
      for (const part of [entries.slice(0, 2), entries.slice(2)]) {
        const fields = part.map((e) => [
          e.id,
          e.time.getTime(),
          e.method,
          e.path,
          e.query,
          e.status,
          e.scim_type,
          e.duration_ms,
          e.resource_id,
          e.request_truncated,
          e.response_truncated,
          e.user_agent,
        ]);
        const bodies = Buffer.concat(
          part.flatMap((e) =>
            [e.request_body, e.response_body].map((b) => {
              const bytes = b === null ? Buffer.alloc(0) : Buffer.from(b, "utf8");
              const length = Buffer.alloc(4);
              length.writeInt32BE(b === null ? -1 : bytes.length);
              return Buffer.concat([length, bytes]);
            }),
          ),
        );
        await sql`insert into scim_request_log_segments (client_id, last_id, first_id, organization_id, entry_count,
            statuses, methods, resource_ids, entries, bodies)
          values (${c}, ${part.at(-1)?.id}, ${part[0]?.id}, ${ORG}, ${part.length}, '{}', '{}', '{}',
            ${await compress(Buffer.from(JSON.stringify(fields)))}, ${await compress(bodies)})`.execute(db);
      }
      await legacy.migrateToLatest();

      const migrated = new RequestLogRepo(db);
      expect(ids(await migrated.list(c, {}, undefined, 100))).toEqual(ids(entries).reverse());
      for (const e of [entries[0], entries[1], entries[20]] as RequestLogEntry[]) {
        expect(await migrated.get(c, e.id)).toEqual(noIp(e));
      }
      expect(await partitionDays(db)).toEqual([DAY0, DAY0 + 1]);
      // The segment table stays for the previous release's instances during a rolling upgrade.
      const left = await sql<{ n: number }>`select count(*)::int as n from scim_request_log_segments`.execute(db);
      expect(left.rows).toEqual([{ n: 2 }]);

      await legacy.migrateTo("0016-request-log-keys");
      const back = await sql<{ n: number; body: string | null; truncated: boolean }>`
        select count(*)::int as n, max(request_body) as body, bool_or(request_truncated) as truncated
          from scim_request_log where client_id = ${c}`.execute(db);
      expect(back.rows[0]).toEqual({ n: 32, body: '{"userName":"Zoë"}', truncated: true });
      // Up again: every entry once.
      await legacy.migrateToLatest();
      expect(ids(await migrated.list(c, {}, undefined, 100))).toEqual(ids(entries).reverse());
    } finally {
      await legacy.close();
    }
  });

  it("moves the rows of 0016's table where 0017 left them", async () => {
    const legacy = await createTestDatabaseAt("0016-request-log-keys");
    const db = legacy.db;
    try {
      const c = "from-rows";
      const entries = old(c);
      for (const e of entries) {
        await sql`insert into scim_request_log (id, client_id, organization_id, time, method, path, query, status,
            scim_type, duration_ms, resource_id, request_body, request_truncated, response_body, response_truncated,
            user_agent)
          values (${e.id}, ${e.client_id}, ${e.organization_id}, ${e.time}, ${e.method}, ${e.path}, ${e.query},
            ${e.status}, ${e.scim_type}, ${e.duration_ms}, ${e.resource_id}, ${e.request_body},
            ${e.request_truncated}, ${e.response_body}, ${e.response_truncated}, ${e.user_agent})`.execute(db);
      }
      await legacy.migrateToLatest();

      const migrated = new RequestLogRepo(db);
      expect(ids(await migrated.list(c, {}, undefined, 100))).toEqual(ids(entries).reverse());
      expect(await migrated.get(c, (entries[0] as RequestLogEntry).id)).toEqual(noIp(entries[0] as RequestLogEntry));
      expect(
        (await migrated.list(c, { status: { min: 400, max: 499 } }, undefined, 10)).map((e) => e.scim_type),
      ).toEqual(["invalidValue"]);
      expect(await partitionDays(db)).toEqual([DAY0, DAY0 + 1]);
    } finally {
      await legacy.close();
    }
  });
});
