/**
 * The extension-attribute filter at scale (docs/scim-extensions.md "How filters are served"): 100 000 users of one
 * organization with a custom extension, plus 100 000 users of 50 other organizations with the same attribute, then
 * `eq` on the extension attribute two ways:
 *   1. the generic side table identity_extension_values (what Roster ships): one index for every tenant;
 *   2. an expression index on identities for this one attribute (the alternative), created here for the comparison.
 * Prints the median and p90 of each query (SQL alone, and the SCIM request for the shipped one) and both plans.
 * Run: `npx tsx bench/extension-filter.ts` (ROSTER_DATABASE_URL: a throwaway schema in it; else embedded PostgreSQL).
 */
import { performance } from "node:perf_hooks";
import { sql } from "kysely";
import { startInProcess } from "./lib/in-process.js";

const USERS = Number(process.env.EXT_USERS ?? 100_000);
const OTHER_ORGS = 50;
const RUNS = Number(process.env.EXT_RUNS ?? 200);
const URN = "urn:okta:acme:1.0:user";
const KEY = `${URN}:costcode`;
const roster = await startInProcess();
const { app, db } = roster;
const admin = { authorization: "Bearer bench-admin" };

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

try {
  const org = (
    await app.inject({ method: "POST", url: "/v2alpha1/admin/organizations", headers: admin, payload: { name: "x" } })
  ).json() as { id: string };
  const client = (
    await app.inject({
      method: "POST",
      url: "/v2alpha1/admin/scimClients",
      headers: admin,
      payload: {
        organization_id: org.id,
        secret: "bench-ext-secret",
        extensions: [
          {
            schema: URN,
            name: "AcmeUser",
            attributes: [{ name: "costCode", filterable: true }],
          },
        ],
      },
    })
  ).json() as { client_id: string };
  const headers = { authorization: "Bearer bench-ext-secret" };

  let started = performance.now();
  const others: string[] = [];
  for (let i = 0; i < OTHER_ORGS; i++) {
    others.push(
      (
        await app.inject({
          method: "POST",
          url: "/v2alpha1/admin/organizations",
          headers: admin,
          payload: { name: `o${i}` },
        })
      ).json().id as string,
    );
  }
  // The target organization, then the others (USERS spread over them), each user with the extension object.
  const seed = async (orgExpr: ReturnType<typeof sql>, from: number, to: number) =>
    sql`insert into identities (id, organization_id, active, user_name, scim, traits, created_at, updated_at, modified_hour)
      select gen_random_uuid(), ${orgExpr}, true, 'user' || i || '@bench.local',
        jsonb_build_object('schemas', jsonb_build_array('urn:ietf:params:scim:schemas:core:2.0:User', ${URN}::text),
          'userName', 'user' || i || '@bench.local', 'active', true,
          ${URN}::text, jsonb_build_object('costCode', 'CC-' || i)),
        '{}'::jsonb, now(), now(), date_bin('1 hour', now(), timestamptz '2000-01-01 00:00:00+00')
      from generate_series(${from}::int, ${to}::int) as i`.execute(db);
  // The per-row counter trigger would update one row 100 000 times in one transaction; the counts are set after.
  await sql`alter table identities disable trigger identities_count_inserted`.execute(db);
  await seed(sql`${org.id}::uuid`, 1, USERS);
  await seed(sql`(${sql.val(others)}::uuid[])[1 + i % ${OTHER_ORGS}]`, USERS + 1, 2 * USERS);
  await sql`alter table identities enable trigger identities_count_inserted`.execute(db);
  await sql`insert into resource_counts (organization_id, resource, shard, n)
    select organization_id, 'users', 0, count(*) from identities group by organization_id
    on conflict (organization_id, resource, shard) do update set n = excluded.n`.execute(db);
  // What IdentityService writes for a client indexing costCode (lower-cased: not caseExact).
  await sql`insert into identity_extension_values (identity_id, organization_id, attribute, value, value_digest, is_unique)
    select id, organization_id, ${KEY}, v, sha256(convert_to(v, 'UTF8')), false
    from identities, lower(scim -> ${URN} ->> 'costCode') as v`.execute(db);
  await sql`analyze`.execute(db);
  const seedMs = performance.now() - started;

  const value = (i: number) => `CC-${1 + ((i * 7919) % USERS)}`;
  const time = async (run: (i: number) => Promise<number>) => {
    for (let i = 0; i < 5; i++) await run(i);
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      const n = await run(i);
      times.push(performance.now() - t0);
      if (n !== 1) throw new Error(`expected one match, got ${n}`);
    }
    times.sort((a, b) => a - b);
    return { median: pct(times, 0.5), p90: pct(times, 0.9) };
  };

  const sideTable = (v: string) =>
    sql<{ id: string }>`select i.id from identities i where i.organization_id = ${org.id}
      and i.id in (select x.identity_id from identity_extension_values x
        where x.organization_id = ${org.id} and x.attribute = ${KEY}
          and x.value_digest = sha256(convert_to(lower(${v}), 'UTF8')))`;
  const expression = (v: string) =>
    sql<{ id: string }>`select i.id from identities i where i.organization_id = ${org.id}
      and lower(i.scim -> ${URN}::text ->> 'costCode') = lower(${v})`;

  const http = await time(async (i) => {
    const filter = encodeURIComponent(`${URN}:costCode eq "${value(i)}"`);
    const res = await app.inject({
      method: "GET",
      url: `/scim/${client.client_id}/v2/Users?filter=${filter}`,
      headers,
    });
    return (res.json() as { totalResults: number }).totalResults;
  });
  const side = await time(async (i) => (await sideTable(value(i)).execute(db)).rows.length);
  const planOf = async (q: ReturnType<typeof sideTable>) =>
    (await sql<{ "QUERY PLAN": string }>`explain (analyze, costs off, timing off) ${q}`.execute(db)).rows
      .map((r) => r["QUERY PLAN"])
      .join("\n");
  const sidePlan = await planOf(sideTable(value(1)));

  started = performance.now();
  await sql`create index bench_expr_idx on identities (organization_id, lower(scim -> ${sql.lit(URN)} ->> 'costCode'))`.execute(
    db,
  );
  const exprBuildMs = performance.now() - started;
  await sql`analyze identities`.execute(db);
  const expr = await time(async (i) => (await expression(value(i)).execute(db)).rows.length);
  const exprPlan = await planOf(expression(value(1)));
  const sizes = await sql<{
    name: string;
    size: string;
  }>`select n as name, pg_size_pretty(pg_relation_size(to_regclass(n))) as size
    from unnest(array['identity_extension_values', 'identity_extension_values_lookup_idx', 'bench_expr_idx']) as n`.execute(
    db,
  );

  console.log(
    `seeded ${USERS} users in the measured organization + ${USERS} in ${OTHER_ORGS} others: ${Math.round(seedMs)} ms`,
  );
  console.log(
    `GET /Users?filter=${URN}:costCode eq "…"   median ${http.median.toFixed(2)} ms  p90 ${http.p90.toFixed(2)} ms`,
  );
  console.log(`SQL, side table                median ${side.median.toFixed(3)} ms  p90 ${side.p90.toFixed(3)} ms`);
  console.log(
    `SQL, expression index          median ${expr.median.toFixed(3)} ms  p90 ${expr.p90.toFixed(3)} ms (built in ${Math.round(exprBuildMs)} ms)`,
  );
  for (const s of sizes.rows) console.log(`size ${s.name}: ${s.size}`);
  console.log(`\nside table plan:\n${sidePlan}\n\nexpression index plan:\n${exprPlan}`);
} finally {
  await roster.close();
}
