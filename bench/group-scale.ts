/**
 * Membership at scale, measured through the SCIM routes (app.inject: server work and serialisation,
 * no network). Run: `npx tsx bench/group-scale.ts` (embedded PostgreSQL) or with ROSTER_DATABASE_URL set (a throwaway schema).
 * Events go to the default sink (built, not stored); the outbox insert is the webhooks module's cost.
 */
import { performance } from "node:perf_hooks";
import { sql } from "kysely";
import { startInProcess } from "./lib/in-process.js";

const USERS = Number(process.env.GROUP_SCALE_USERS ?? 110_000);
const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const roster = await startInProcess();
const { app } = roster;
const { organizationId, base, headers } = await roster.scimClient();

async function call(method: "GET" | "POST" | "PATCH" | "PUT", path: string, body?: unknown) {
  const started = performance.now();
  const res = await app.inject({
    method,
    url: `${base}${path}`,
    headers,
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  const ms = performance.now() - started;
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${res.body.slice(0, 300)}`);
  return { ms, res };
}

const results: { step: string; ms: number; note?: string }[] = [];
const record = (step: string, ms: number, note?: string) => {
  results.push(note === undefined ? { step, ms } : { step, ms, note });
  console.log(`${step.padEnd(64)} ${ms.toFixed(1).padStart(9)} ms${note === undefined ? "" : `  ${note}`}`);
};
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

// Identities as the Users API stores them, in one statement.
let started = performance.now();
const { rows: users } = await sql<{ id: string }>`
  insert into identities (id, organization_id, active, user_name, scim, created_at, updated_at, modified_hour)
  select gen_random_uuid(), ${organizationId}::uuid, true, 'user' || i || '@bench.local',
    jsonb_build_object('schemas', jsonb_build_array('urn:ietf:params:scim:schemas:core:2.0:User'),
      'userName', 'user' || i || '@bench.local', 'active', true,
      'name', jsonb_build_object('givenName', 'Given' || i, 'familyName', 'Family' || i)),
    now(), now(), date_bin('1 hour', now(), timestamptz '2000-01-01 00:00:00+00')
  from generate_series(1, ${USERS}::int) as i
  returning id`.execute(roster.db);
await sql`analyze`.execute(roster.db);
record(`seed ${USERS} identities (SQL, not measured API)`, performance.now() - started);
const ids = users.map((u) => u.id);
const members = (from: number, to: number) => ids.slice(from, to).map((value) => ({ value }));

const create = async (name: string) =>
  (await call("POST", "/Groups", { schemas: [GROUP_SCHEMA], displayName: name })).res.json().id as string;
const add = (id: string, list: { value: string }[], query = "") =>
  call("PATCH", `/Groups/${id}${query}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: "add", path: "members", value: list }],
  });

// 1. The two figures that matter at scale: add 10 000 members in one PATCH, then GET that group.
const g10k = await create("ten thousand");
let r = await add(g10k, members(0, 10_000), "?excludedAttributes=members");
record("PATCH add 10 000 members (response without members)", r.ms);
const g10kFull = await create("ten thousand, full response");
r = await add(g10kFull, members(0, 10_000));
record("PATCH add 10 000 members (response with all members)", r.ms, mb(r.res.body.length));
for (let i = 0; i < 3; i++) {
  r = await call("GET", `/Groups/${g10k}`);
  record(`GET group of 10 000 members (run ${i + 1})`, r.ms, mb(r.res.body.length));
}

// 2. A group of 100 000 members.
const g100k = await create("hundred thousand");
r = await add(g100k, members(0, 100_000), "?excludedAttributes=members");
record("PATCH add 100 000 members in one request", r.ms);
// What autovacuum does after a bulk change; without it the planner still believes the table is empty.
await sql`analyze group_user_members`.execute(roster.db);
const heapBefore = process.memoryUsage().heapUsed;
for (let i = 0; i < 3; i++) {
  r = await call("GET", `/Groups/${g100k}`);
  record(`GET group of 100 000 members (run ${i + 1})`, r.ms, mb(r.res.body.length));
}
console.log(`  heap growth over the GETs: ${mb(process.memoryUsage().heapUsed - heapBefore)}`);
r = await call("GET", `/Groups/${g100k}?excludedAttributes=members`);
record("GET group of 100 000 members, excludedAttributes=members", r.ms);
r = await add(g100k, members(100_000, 100_010), "?excludedAttributes=members");
record("PATCH add 10 members to the 100 000 group (no members back)", r.ms);
r = await add(g100k, members(100_010, 100_020));
record("PATCH add 10 members to the 100 000 group (all members back)", r.ms, mb(r.res.body.length));
r = await call("PATCH", `/Groups/${g100k}?excludedAttributes=members`, {
  schemas: [PATCH_OP],
  Operations: [{ op: "remove", path: `members[value eq "${ids[5]}"]` }],
});
record("PATCH remove 1 member from the 100 000 group", r.ms);
r = await call("PUT", `/Groups/${g100k}?excludedAttributes=members`, {
  schemas: [GROUP_SCHEMA],
  displayName: "hundred thousand",
  members: members(0, 100_000),
});
record("PUT the 100 000 group with a list differing by 21", r.ms);
r = await call("PATCH", `/Groups/${g100k}?excludedAttributes=members`, {
  schemas: [PATCH_OP],
  Operations: [{ op: "remove", path: "members" }],
});
record("PATCH remove all 100 000 members", r.ms);

// 3. Everyday operations, averaged.
const N = 200;
started = performance.now();
for (let i = 0; i < N; i++) await create(`everyday ${i}`);
record(`POST /Groups (empty), mean of ${N}`, (performance.now() - started) / N);
const small = await create("small");
started = performance.now();
for (let i = 0; i < N; i++) await add(small, members(i * 10, i * 10 + 10), "?excludedAttributes=members");
record(`PATCH add 10 members, mean of ${N} (no members back)`, (performance.now() - started) / N);
const small2 = await create("small, full responses");
started = performance.now();
for (let i = 0; i < 50; i++) await add(small2, members(i * 10, i * 10 + 10));
record("PATCH add 10 members, mean of 50 (group grows to 500, all back)", (performance.now() - started) / 50);

await roster.close();
if (process.env.GROUP_SCALE_JSON !== undefined) console.log(JSON.stringify({ users: USERS, results }));
