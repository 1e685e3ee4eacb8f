/**
 * Membership changes and reads by group size, through the SCIM routes: single-member PATCH (Entra's add, Okta's
 * remove by filter) and 100-member batch adds on groups of 10, 1 000, 10 000 and 100 000 members, each timed in the
 * server (app.inject: routing, SQL, serialisation) and on the wire (fetch over loopback, body read); 10 concurrent
 * GETs of the 100 000 group with the process's RSS; a PUT of that group differing by 4 members.
 * Run: `ROSTER_DATABASE_URL=postgres://… npx tsx bench/group-sizes.ts` (a throwaway schema) or embedded.
 */
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { sql } from "kysely";
import { startInProcess } from "./lib/in-process.js";
import { summarize } from "./lib/stats.js";

const SIZES = (process.env.GROUP_SIZES ?? "10,1000,10000,100000").split(",").map(Number);
const ROUNDS = Number(process.env.GROUP_SIZES_ROUNDS ?? 60);
const BATCHES = Number(process.env.GROUP_SIZES_BATCHES ?? 10);
const LARGEST = Math.max(...SIZES);
const SPARE = SIZES.length * (2 + 2 * BATCHES * 100) + 10;
const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

const roster = await startInProcess();
const { app } = roster;
const { organizationId, base, headers } = await roster.scimClient();
await app.listen({ host: "127.0.0.1", port: 0 });
const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

// Seeded in batches, each well within the statement timeout on a busy machine.
const users: string[] = [];
for (let from = 1; from <= LARGEST + SPARE; from += 10_000) {
  const to = Math.min(LARGEST + SPARE, from + 9_999);
  const { rows } = await sql<{ id: string }>`
    insert into identities (id, organization_id, active, user_name, scim, created_at, updated_at, modified_hour)
    select gen_random_uuid(), ${organizationId}::uuid, true, 'user' || i || '@bench.local',
      jsonb_build_object('schemas', jsonb_build_array('urn:ietf:params:scim:schemas:core:2.0:User'),
        'userName', 'user' || i || '@bench.local', 'active', true), now(), now(), date_bin('1 hour', now(), timestamptz '2000-01-01 00:00:00+00')
    from generate_series(${from}::int, ${to}::int) as i returning id`.execute(roster.db);
  users.push(...rows.map((r) => r.id));
}
const spare = users.slice(LARGEST);
let nextSpare = 0;
const take = (n: number) => {
  if (nextSpare + n > spare.length) throw new Error("the bench ran out of spare users");
  nextSpare += n;
  return spare.slice(nextSpare - n, nextSpare);
};

type Method = "GET" | "POST" | "PATCH" | "PUT";
const server = async (method: Method, path: string, body?: unknown) => {
  const started = performance.now();
  const payload = body === undefined ? {} : { payload: JSON.stringify(body) };
  const res = await app.inject({ method, url: `${base}${path}`, headers, ...payload });
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${res.body.slice(0, 200)}`);
  return performance.now() - started;
};
const wire = async (method: Method, path: string, body?: unknown) => {
  const started = performance.now();
  const res = await fetch(`${origin}${base}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  let bytes = 0;
  for await (const chunk of res.body ?? []) bytes += (chunk as Uint8Array).length;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status}`);
  return { ms: performance.now() - started, bytes };
};
const patchBody = (ops: unknown[]) => ({ schemas: [PATCH_OP], Operations: ops });
const add = (ids: readonly string[]) =>
  patchBody([{ op: "Add", path: "members", value: ids.map((value) => ({ value, $ref: null })) }]);
const remove = (id: string) => patchBody([{ op: "remove", path: `members[value eq "${id}"]` }]);

const groups = new Map<number, string>();
for (const size of SIZES) {
  const res = await app.inject({
    method: "POST",
    url: `${base}/Groups`,
    headers,
    payload: JSON.stringify({ schemas: [GROUP_SCHEMA], displayName: `size ${size}` }),
  });
  const id = res.json().id as string;
  await sql`insert into group_user_members (group_id, identity_id, organization_id)
    select ${id}::uuid, u, ${organizationId}::uuid from unnest(${users.slice(0, size)}::uuid[]) as u`.execute(
    roster.db,
  );
  groups.set(size, id);
}
await sql`analyze`.execute(roster.db);

const f = (ms: number) => ms.toFixed(2).padStart(8);
console.log(`group size | single add+remove p50/p99 server | p50/p99 wire | batch of 100 p50/p99 server | wire`);
const table: Record<number, Record<string, number>> = {};
// Rounds interleave the sizes, so load on the machine and warm-up fall on every size alike.
const samples = new Map(
  SIZES.map((size) => [
    size,
    { single: [] as number[], wire: [] as number[], batch: [] as number[], batchWire: [] as number[] },
  ]),
);
const pair = new Map(SIZES.map((size) => [size, take(2) as [string, string]]));
for (const size of SIZES) {
  const [a] = pair.get(size) as [string, string];
  for (let i = 0; i < 5; i++) {
    await server("PATCH", `/Groups/${groups.get(size)}`, add([a]));
    await server("PATCH", `/Groups/${groups.get(size)}`, remove(a));
  }
}
for (let i = 0; i < ROUNDS; i++) {
  for (const size of SIZES) {
    const id = groups.get(size) as string;
    const [a, b] = pair.get(size) as [string, string];
    const s = samples.get(size) as { single: number[]; wire: number[]; batch: number[]; batchWire: number[] };
    s.single.push(await server("PATCH", `/Groups/${id}`, add([a])));
    s.single.push(await server("PATCH", `/Groups/${id}`, remove(a)));
    s.wire.push((await wire("PATCH", `/Groups/${id}`, add([b]))).ms);
    s.wire.push((await wire("PATCH", `/Groups/${id}`, remove(b))).ms);
    if (i < BATCHES) {
      s.batch.push(await server("PATCH", `/Groups/${id}`, add(take(100))));
      s.batchWire.push((await wire("PATCH", `/Groups/${id}`, add(take(100)))).ms);
    }
  }
}
for (const size of SIZES) {
  const m = samples.get(size) as { single: number[]; wire: number[]; batch: number[]; batchWire: number[] };
  const [s, sw, bt, bw] = [m.single, m.wire, m.batch, m.batchWire].map(summarize) as [
    ReturnType<typeof summarize>,
    ReturnType<typeof summarize>,
    ReturnType<typeof summarize>,
    ReturnType<typeof summarize>,
  ];
  table[size] = { s50: s.p50, s99: s.p99, w50: sw.p50, w99: sw.p99, b50: bt.p50, b99: bt.p99, bw50: bw.p50 };
  console.log(
    `${String(size).padStart(10)} | ${f(s.p50)} ${f(s.p99)} | ${f(sw.p50)} ${f(sw.p99)} | ${f(bt.p50)} ${f(bt.p99)} | ${f(bw.p50)} ${f(bw.p99)}`,
  );
}

// 10 concurrent GETs of the largest group over the wire, bodies read and dropped; RSS sampled every 10 ms.
const largest = groups.get(LARGEST) as string;
await wire("GET", `/Groups/${largest}`);
global.gc?.();
const before = process.memoryUsage().rss;
let peak = before;
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss);
}, 10);
const started = performance.now();
const gets = await Promise.all(Array.from({ length: 10 }, () => wire("GET", `/Groups/${largest}`)));
const getMs = performance.now() - started;
clearInterval(sampler);
peak = Math.max(peak, process.memoryUsage().rss);
const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
console.log(
  `10 concurrent GETs of the ${LARGEST} group: ${getMs.toFixed(0)} ms for all, each ${mib(gets[0]?.bytes ?? 0)}; ` +
    `RSS before ${mib(before)}, peak ${mib(peak)} (+${mib(peak - before)}); ` +
    `slowest single ${Math.max(...gets.map((g) => g.ms)).toFixed(0)} ms`,
);

// PUT of the largest group with a list that differs by 4 (2 removed, 2 added): only the difference is written.
const members = await sql<{ identity_id: string }>`select identity_id from group_user_members
  where group_id = ${largest}::uuid`.execute(roster.db);
const list = members.rows.map((r) => r.identity_id);
const put = [...list.slice(2), ...take(2)].map((value) => ({ value }));
// Rows the PUT wrote: those whose xmin is its transaction or later, and the count before and after.
const { rows: mark } = await sql<{ x: string }>`select txid_current()::text as x`.execute(roster.db);
const countBefore = list.length;
const putMs = await server("PUT", `/Groups/${largest}?excludedAttributes=members`, {
  schemas: [GROUP_SCHEMA],
  displayName: `size ${LARGEST}`,
  members: put,
});
const { rows: written } = await sql<{ inserted: number; total: number }>`
  select count(*) filter (where xmin::text::bigint > ${Number(mark[0]?.x ?? 0) % 2 ** 32})::int as inserted,
    count(*)::int as total
  from group_user_members where group_id = ${largest}::uuid`.execute(roster.db);
const inserted = written[0]?.inserted ?? 0;
const deleted = countBefore - ((written[0]?.total ?? 0) - inserted);
const sameMs = await server("PUT", `/Groups/${largest}?excludedAttributes=members`, {
  schemas: [GROUP_SCHEMA],
  displayName: `size ${LARGEST}`,
  members: put,
});
console.log(
  `PUT of the ${put.length}-member group differing by 4: ${putMs.toFixed(0)} ms, rows inserted ${inserted}, ` +
    `deleted ${deleted}; the same PUT again (no change) ${sameMs.toFixed(0)} ms`,
);
await roster.close();
if (process.env.GROUP_SIZES_JSON !== undefined) console.log(JSON.stringify({ table, getMs, peak, before }));
