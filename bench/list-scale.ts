/**
 * Listing on PostgreSQL with 100 000 users of one organization, through the SCIM routes
 * (app.inject: server work and serialisation, no network). Run: `npx tsx bench/list-scale.ts`.
 *
 * Database: ROSTER_DATABASE_URL (a throwaway schema is created in it and dropped afterwards), else an embedded
 * PostgreSQL. Users are seeded with set-based SQL writing exactly what the users service writes (identities with
 * the SCIM document, indexed columns and default-mapping traits; identity_identifiers for userName and email),
 * then ANALYZE. Each measurement is the median of LIST_SCALE_RUNS (default 50) requests.
 */
import { performance } from "node:perf_hooks";
import { sql } from "kysely";
import { startInProcess } from "./lib/in-process.js";

const USERS = Number(process.env.LIST_SCALE_USERS ?? 100_000);
const RUNS = Number(process.env.LIST_SCALE_RUNS ?? 50);
const DEPTH = Math.min(90_000, USERS - 1000);
const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
const roster = await startInProcess();
const { app, external } = roster;

try {
  await run();
} finally {
  await roster.close();
}

async function run(): Promise<void> {
  const { organizationId, base, headers } = await roster.scimClient();
  const org = { id: organizationId };

  const get = async (query: string): Promise<{ ms: number; body: Record<string, unknown> }> => {
    const started = performance.now();
    const res = await app.inject({ method: "GET", url: `${base}/Users?${query}`, headers });
    const ms = performance.now() - started;
    if (res.statusCode !== 200) throw new Error(`GET /Users?${query}: ${res.statusCode} ${res.body.slice(0, 300)}`);
    return { ms, body: res.json() as Record<string, unknown> };
  };

  // --- seed -------------------------------------------------------------------------------------------------
  let started = performance.now();
  const version = await sql<{ v: number }>`select current_setting('server_version_num')::int as v`.execute(roster.db);
  // uuidv7() (PostgreSQL 18) like the service's ids; older servers fall back to random UUIDs (ordering still by id).
  const newId = (version.rows[0]?.v ?? 0) >= 180_000 ? sql`uuidv7()` : sql`gen_random_uuid()`;
  await sql`
    insert into identities (id, organization_id, active, user_name, external_id, employee_number, scim, traits,
      password_hash, created_at, updated_at, modified_hour)
    select ${newId}, ${org.id}::uuid, true, u.user_name, 'ext-' || u.i, null,
      jsonb_build_object(
        'schemas', jsonb_build_array(${USER_SCHEMA}::text),
        'userName', u.user_name,
        'externalId', 'ext-' || u.i,
        'name', jsonb_build_object('givenName', 'Given' || u.i, 'familyName', 'Family' || u.i),
        'emails', jsonb_build_array(jsonb_build_object('value', u.email, 'type', 'work', 'primary', true)),
        'active', true),
      jsonb_build_object(
        'username', u.user_name,
        'email', u.email,
        'name', jsonb_build_object('first', 'Given' || u.i, 'last', 'Family' || u.i)),
      null, now(), now(), date_bin('1 hour', now(), timestamptz '2000-01-01 00:00:00+00')
    from (
      select i, 'user' || i || '@bench.local' as user_name, 'user' || i || '@work.bench.local' as email
      from generate_series(1, ${USERS}::int) as i
    ) u`.execute(roster.db);
  // identifiersOf(): the lower-cased userName, then each email that differs from it.
  await sql`
    insert into identity_identifiers (value, identity_id, organization_id, kind)
    select lower(user_name), id, organization_id, 'userName' from identities where organization_id = ${org.id}::uuid
    union all
    select lower(scim -> 'emails' -> 0 ->> 'value'), id, organization_id, 'email'
    from identities where organization_id = ${org.id}::uuid`.execute(roster.db);
  await sql`analyze`.execute(roster.db);
  const seedMs = performance.now() - started;

  // Sanity: the API sees every user, and a seeded user reads back like one written through SCIM.
  const total = (await get("count=0")).body.totalResults;
  if (total !== USERS) throw new Error(`expected ${USERS} users, the API counts ${String(total)}`);

  // --- measure ----------------------------------------------------------------------------------------------
  const rows: { what: string; median: number; p90: number; note: string }[] = [];
  const measure = async (
    what: string,
    query: (run: number) => string,
    check: (b: Record<string, unknown>) => string,
  ) => {
    for (let i = 0; i < 3; i++) await get(query(i)); // warm-up
    const times: number[] = [];
    let note = "";
    for (let i = 0; i < RUNS; i++) {
      const { ms, body } = await get(query(i));
      times.push(ms);
      note = check(body);
    }
    times.sort((a, b) => a - b);
    rows.push({ what, median: pct(times, 0.5), p90: pct(times, 0.9), note });
  };
  const resources = (b: Record<string, unknown>) => (Array.isArray(b.Resources) ? b.Resources.length : 0);
  const firstId = (b: Record<string, unknown>) =>
    Array.isArray(b.Resources) ? String((b.Resources[0] as { id: string } | undefined)?.id) : "";

  const filter = (i: number) =>
    `filter=${encodeURIComponent(`userName eq "USER${1 + ((i * 7919) % USERS)}@bench.local"`)}`;
  await measure('filter=userName eq "…" (case-insensitive)', filter, (b) => {
    if (b.totalResults !== 1) throw new Error("userName filter did not find exactly one user");
    return "1 of 100 000";
  });
  await measure(
    "offset page startIndex=4901&count=100",
    () => "startIndex=4901&count=100",
    (b) => {
      if (resources(b) !== 100 || b.totalResults !== USERS) throw new Error("offset page is not 100 rows");
      return `${resources(b)} rows + totalResults`;
    },
  );
  await measure(
    "count=0 (totalResults only: the offset page's count)",
    () => "count=0",
    (b) => {
      return `totalResults ${String(b.totalResults)}`;
    },
  );
  await measure(
    "cursor page 1 (cursor=&count=100)",
    () => "cursor=&count=100",
    (b) => `${resources(b)} rows`,
  );

  // Deep cursors: a cursor binds count, so walk with the count that is measured.
  started = performance.now();
  const deep1000 = await walk(get, 1000, DEPTH);
  const walk1000Ms = performance.now() - started;
  started = performance.now();
  const deep100 = await walk(get, 100, DEPTH);
  const walk100Ms = performance.now() - started;
  const expected = await sql<{ id: string }>`
    select id from identities where organization_id = ${org.id}::uuid order by id offset ${DEPTH} limit 1`.execute(
    roster.db,
  );
  const at = expected.rows[0]?.id ?? "";
  const deepCheck = (count: number) => (b: Record<string, unknown>) => {
    if (firstId(b) !== at || resources(b) !== count) throw new Error(`deep page does not start at user ${DEPTH + 1}`);
    return `users ${DEPTH + 1}–${DEPTH + count}`;
  };
  await measure(
    `cursor page at depth ${DEPTH} (count=100)`,
    () => `cursor=${encodeURIComponent(deep100)}&count=100`,
    deepCheck(100),
  );
  await measure(
    `cursor page at depth ${DEPTH} (count=1000)`,
    () => `cursor=${encodeURIComponent(deep1000)}&count=1000`,
    deepCheck(1000),
  );
  await measure(
    "offset page startIndex=1&count=1000 (comparison)",
    () => "startIndex=1&count=1000",
    (b) => {
      return `${resources(b)} rows + totalResults`;
    },
  );

  // --- report -----------------------------------------------------------------------------------------------
  console.log(
    `\nGET /Users on PostgreSQL ${version.rows[0]?.v ?? "?"} (${external ? "ROSTER_DATABASE_URL" : "embedded"}), ` +
      `${USERS} users in one organization; median and p90 of ${RUNS} app.inject requests\n`,
  );
  console.log(`seed (set-based SQL + ANALYZE): ${(seedMs / 1000).toFixed(1)} s`);
  console.log(
    `walk to depth ${DEPTH}: count=1000 ${(walk1000Ms / 1000).toFixed(1)} s (${DEPTH / 1000} pages), ` +
      `count=100 ${(walk100Ms / 1000).toFixed(1)} s (${DEPTH / 100} pages)\n`,
  );
  const w = Math.max(...rows.map((r) => r.what.length));
  console.log(`| ${"request".padEnd(w)} | median ms | p90 ms | result`);
  console.log(`|${"-".repeat(w + 2)}|-----------|--------|-------`);
  for (const r of rows) {
    console.log(
      `| ${r.what.padEnd(w)} | ${r.median.toFixed(1).padStart(9)} | ${r.p90.toFixed(1).padStart(6)} | ${r.note}`,
    );
  }
}

/** Follows nextCursor with `count` until `depth` users lie behind the cursor. */
async function walk(
  get: (query: string) => Promise<{ body: Record<string, unknown> }>,
  count: number,
  depth: number,
): Promise<string> {
  let cursor = "";
  for (let seen = 0; seen < depth; seen += count) {
    const { body } = await get(`cursor=${encodeURIComponent(cursor)}&count=${count}`);
    if (typeof body.nextCursor !== "string") throw new Error(`no nextCursor after ${seen} users`);
    cursor = body.nextCursor;
  }
  return cursor;
}

function pct(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}
