import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RequestLogEntry, RequestLogRepo, uuidv7Floor } from "../../src/observability/request-log/repo.js";
import { createTestDatabase, createTestDatabaseAt, type TestDatabase } from "../helpers/database.js";

/**
 * The request log's segments (one row per client and written batch) read back as entries: newest first across
 * segments, including segments two instances wrote over the same stretch of time, filtered, paged, one by id with
 * its bodies, pruned a segment at a time, and moved from the row-per-entry table by the migration.
 */

let database: TestDatabase;
let repo: RequestLogRepo;
beforeAll(async () => {
  database = await createTestDatabase();
  repo = new RequestLogRepo(database.db);
});
afterAll(async () => database.close());

const ORG = "0190c000-0000-7000-8000-0000000000aa";
const T0 = Date.UTC(2026, 10, 25, 12);

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
    ...fields,
  };
}

const client = () => `seg-${randomBytes(4).toString("hex")}`;
const ids = (entries: readonly { id: string }[]) => entries.map((e) => e.id);

describe("the request log's segments", () => {
  it("lists newest first across segments, merging two instances' overlapping segments, page by page", async () => {
    const c = client();
    // Instance A wrote 0, 2, 4, 6 in one batch; instance B wrote 1, 3, 5 in another over the same time; a later
    // batch of A holds 7 and 8.
    await repo.insert([0, 2, 4, 6].map((ms) => entry(c, ms)));
    await repo.insert([1, 3, 5].map((ms) => entry(c, ms)));
    await repo.insert([7, 8].map((ms) => entry(c, ms)));
    const all = [8, 7, 6, 5, 4, 3, 2, 1, 0].map((ms) => entry(c, ms).id);

    expect(ids(await repo.list(c, {}, undefined, 100))).toEqual(all);
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

  it("filters by status range, method and resource, also where a segment holds only some matches", async () => {
    const c = client();
    await repo.insert([
      entry(c, 10, { status: 201, method: "POST", resource_id: "alice" }),
      entry(c, 11, { status: 404, scim_type: null, resource_id: "nobody" }),
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
    // A page of one, then the rest, with a filter.
    const first = await repo.list(c, { method: "POST" }, undefined, 1);
    expect(first.map((e) => e.status)).toEqual([409]);
    expect((await repo.list(c, { method: "POST" }, first[0]?.id, 5)).map((e) => e.status)).toEqual([201]);
  });

  it("reads one entry by id with both bodies, from any segment, and nothing for an unknown id or another client", async () => {
    const c = client();
    const body = '{"userName":"zoë@example.com","note":"李 \\" quoted"}';
    await repo.insert([
      entry(c, 30, { method: "POST", request_body: body, response_body: null, request_truncated: true }),
      entry(c, 32),
    ]);
    await repo.insert([entry(c, 31, { response_body: "not JSON at all" })]);
    const one = await repo.get(c, entry(c, 30).id);
    expect(one).toEqual(
      entry(c, 30, { method: "POST", request_body: body, response_body: null, request_truncated: true }),
    );
    expect(await repo.get(c, entry(c, 31).id)).toEqual(entry(c, 31, { response_body: "not JSON at all" }));
    expect((await repo.get(c, entry(c, 32).id))?.response_body).toBe('{"id":"u32"}');
    expect(await repo.get(c, entry(c, 33).id)).toBeUndefined();
    expect(await repo.get(client(), entry(c, 30).id)).toBeUndefined();
  });

  it("writes one segment per client of a batch", async () => {
    const [a, b] = [client(), client()];
    await repo.insert([entry(a, 40), entry(b, 41), entry(a, 42)]);
    const rows = (
      await sql<{ client_id: string; entry_count: number; statuses: number[]; methods: string[] }>`
        select client_id, entry_count, statuses, methods from scim_request_log_segments
         where client_id in (${a}, ${b}) order by entry_count desc`.execute(database.db)
    ).rows;
    expect(rows).toEqual([
      { client_id: a, entry_count: 2, statuses: [200], methods: ["GET"] },
      { client_id: b, entry_count: 1, statuses: [200], methods: ["GET"] },
    ]);
    expect(ids(await repo.list(a, {}, undefined, 10))).toEqual([entry(a, 42).id, entry(a, 40).id]);
  });

  it("prunes whole segments once their newest entry is past the cutoff, and says how many entries went", async () => {
    const c = client();
    const DAY = 24 * 3600_000;
    await repo.insert([entry(c, -30 * DAY), entry(c, -30 * DAY + 1)]);
    // This one straddles the cutoff: it stays until its newest entry is past it.
    await repo.insert([entry(c, -20 * DAY - 5), entry(c, -20 * DAY + 5)]);
    const gone = await repo.pruneEntries(uuidv7Floor(T0 - 20 * DAY), 1_000_000);
    expect(gone.entries).toBeGreaterThanOrEqual(2);
    expect((await repo.list(c, {}, undefined, 10)).map((e) => e.time.getTime() - T0)).toEqual([
      -20 * DAY + 5,
      -20 * DAY - 5,
    ]);
  });
});

describe("the migration to segments", () => {
  it("moves every row-per-entry entry into segments, and back", async () => {
    const legacy = await createTestDatabaseAt("0016-request-log-keys");
    const db = legacy.db;
    try {
      const c = "migrated";
      const old = [
        entry(c, 1, { method: "POST", status: 201, request_body: '{"userName":"Zoë"}', request_truncated: true }),
        entry(c, 2, { status: 404, scim_type: "invalidValue", response_body: null, resource_id: null }),
        ...Array.from({ length: 600 }, (_v, i) => entry(c, 10 + i)),
        entry("other", 5),
      ];
      for (const e of old) {
        await sql`insert into scim_request_log (id, client_id, organization_id, time, method, path, query, status,
            scim_type, duration_ms, resource_id, request_body, request_truncated, response_body, response_truncated,
            user_agent)
          values (${e.id}, ${e.client_id}, ${e.organization_id}, ${e.time}, ${e.method}, ${e.path}, ${e.query},
            ${e.status}, ${e.scim_type}, ${e.duration_ms}, ${e.resource_id}, ${e.request_body},
            ${e.request_truncated}, ${e.response_body}, ${e.response_truncated}, ${e.user_agent})`.execute(db);
      }
      await legacy.migrateToLatest();

      const migrated = new RequestLogRepo(db);
      const segments = await sql<{ n: number }>`
        select entry_count as n from scim_request_log_segments where client_id = ${c} order by last_id`.execute(db);
      expect(segments.rows.map((r) => r.n)).toEqual([500, 102]);
      const listed = await migrated.list(c, {}, undefined, 1000);
      expect(ids(listed)).toEqual(
        ids(old.filter((e) => e.client_id === c))
          .sort()
          .reverse(),
      );
      for (const e of [old[0], old[1], old[300]] as RequestLogEntry[]) {
        expect(await migrated.get(c, e.id)).toEqual(e);
      }
      expect(
        (await migrated.list(c, { status: { min: 400, max: 499 } }, undefined, 10)).map((e) => e.scim_type),
      ).toEqual(["invalidValue"]);
      expect(ids(await migrated.list("other", {}, undefined, 10))).toEqual([entry("other", 5).id]);

      await legacy.migrateTo("0016-request-log-keys");
      const back = await sql<{ n: number; body: string | null; truncated: boolean }>`
        select count(*)::int as n, max(request_body) as body, bool_or(request_truncated) as truncated
          from scim_request_log where client_id = ${c}`.execute(db);
      expect(back.rows[0]).toEqual({ n: 602, body: '{"userName":"Zoë"}', truncated: true });
    } finally {
      await legacy.close();
    }
  });
});
