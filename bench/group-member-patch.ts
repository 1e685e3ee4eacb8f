/**
 * The cost of a plain user-member PATCH (the Entra and Okta forms) and of a nesting PATCH, one at a time and 16 at
 * a time on distinct groups, through the SCIM routes (app.inject). Compares lock-order changes before and after.
 * Run: `ROSTER_DATABASE_URL=postgres://… npx tsx bench/group-member-patch.ts` (a throwaway schema) or embedded.
 */
import { performance } from "node:perf_hooks";
import { sql } from "kysely";
import { startInProcess } from "./lib/in-process.js";

const ROUNDS = Number(process.env.MEMBER_PATCH_ROUNDS ?? 300);
const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const roster = await startInProcess();
const { app } = roster;
const { organizationId, base, headers } = await roster.scimClient();

const call = async (method: "POST" | "PATCH", path: string, body: unknown) => {
  const res = await app.inject({ method, url: `${base}${path}`, headers, payload: JSON.stringify(body) });
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${res.body.slice(0, 300)}`);
  return res;
};
const { rows } = await sql<{ id: string }>`
  insert into identities (id, organization_id, active, user_name, scim, created_at, updated_at, modified_hour)
  select gen_random_uuid(), ${organizationId}::uuid, true, 'user' || i || '@bench.local',
    jsonb_build_object('schemas', jsonb_build_array('urn:ietf:params:scim:schemas:core:2.0:User'),
      'userName', 'user' || i || '@bench.local', 'active', true), now(), now(), date_bin('1 hour', now(), timestamptz '2000-01-01 00:00:00+00')
  from generate_series(1, 2000) as i returning id`.execute(roster.db);
const users = rows.map((r) => r.id);
const groups: string[] = [];
for (let i = 0; i < 64; i++) {
  groups.push((await call("POST", "/Groups", { schemas: [GROUP_SCHEMA], displayName: `g${i}` })).json().id);
}
const at = <T>(xs: readonly T[], i: number): T => xs[i % xs.length] as T;

const forms: Record<string, (i: number) => [string, unknown[]]> = {
  "Entra add user (no type)": (i) => [
    at(groups, i),
    [{ op: "Add", path: "members", value: [{ value: at(users, i), $ref: null }] }],
  ],
  "Okta remove user (filter)": (i) => [at(groups, i), [{ op: "remove", path: `members[value eq "${at(users, i)}"]` }]],
  "add a group member (nesting)": (i) => [
    at(groups, (i % 32) * 2),
    [{ op: "add", path: "members", value: [{ value: at(groups, (i % 32) * 2 + 1) }] }],
  ],
};

const patch = ([id, ops]: [string, unknown[]]) =>
  call("PATCH", `/Groups/${id}`, { schemas: [PATCH_OP], Operations: ops });
const ms = (from: number) => performance.now() - from;
for (const [name, form] of Object.entries(forms)) {
  for (let i = 0; i < 50; i++) await patch(form(i + 10_000));
  let started = performance.now();
  for (let i = 0; i < ROUNDS; i++) await patch(form(i));
  const serial = ms(started) / ROUNDS;
  started = performance.now();
  for (let i = 0; i < ROUNDS; i += 16) {
    await Promise.all(Array.from({ length: 16 }, (_, k) => patch(form(i + k + 20_000))));
  }
  const parallel = ms(started) / ROUNDS;
  console.log(
    `${name.padEnd(32)} one at a time ${serial.toFixed(2)} ms/request, 16 at a time ${parallel.toFixed(2)} ms/request`,
  );
}
await roster.close();
