/**
 * What the deprovisioning guard costs a SCIM write (docs/deprovisioning.md): the same connection with its guard on
 * and off, in interleaved rounds (the order alternates each round) so that a loaded host's drift falls on both
 * alike. Each round times, one request at a time through app.inject (server work, no network), `create`
 * (POST /Users), `patch` (PATCH of nickName: no deprovisioning) and `deactivate` (PATCH active=false). With the guard
 * on, a deactivation takes the guard's lock, writes its mark, counts the window and — past `min_count` — the
 * organization's active users; `share_percent` is 100 here so that the guard never trips and every round measures
 * the same path. Medians and 90th percentiles of the per-request wall time, per setting.
 * Run: ROSTER_DATABASE_URL=postgres://… npx tsx bench/guard-cost.ts [rounds=10] [perRound=100] [seed=2000]
 */
import { performance } from "node:perf_hooks";
import { startInProcess } from "./lib/in-process.js";
import { summarize } from "./lib/stats.js";

const ROUNDS = Number(process.argv[2] ?? 10);
const PER_ROUND = Number(process.argv[3] ?? 100);
const SEED = Number(process.argv[4] ?? 2_000);
const ADMIN = { authorization: "Bearer bench-admin" };
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const USER = "urn:ietf:params:scim:schemas:core:2.0:User";

const roster = await startInProcess();
try {
  const { base, headers } = await roster.scimClient();
  const clientId = base.split("/")[2] ?? "";
  let n = 0;
  const create = async () => {
    n += 1;
    const res = await roster.app.inject({
      method: "POST",
      url: `${base}/Users`,
      headers,
      payload: { schemas: [USER], userName: `u${n}@example.com`, active: true },
    });
    if (res.statusCode !== 201) throw new Error(`create: ${res.statusCode} ${res.body}`);
    return (res.json() as { id: string }).id;
  };
  const patch = async (id: string, op: Record<string, unknown>) => {
    const res = await roster.app.inject({
      method: "PATCH",
      url: `${base}/Users/${id}`,
      headers,
      payload: { schemas: [PATCH_OP], Operations: [op] },
    });
    if (res.statusCode !== 200) throw new Error(`patch: ${res.statusCode} ${res.body}`);
  };
  const guard = async (enabled: boolean) => {
    const res = await roster.app.inject({
      method: "PATCH",
      url: `/v2alpha1/admin/scimClients/${clientId}/deprovisioningGuard`,
      headers: ADMIN,
      payload: { enabled, share_percent: 100, min_count: 50, window_seconds: 3600 },
    });
    if (res.statusCode !== 200) throw new Error(`guard: ${res.statusCode} ${res.body}`);
  };
  const seeded: string[] = [];
  for (let i = 0; i < SEED; i++) seeded.push(await create());
  const timed = async (work: () => Promise<unknown>) => {
    const start = performance.now();
    await work();
    return performance.now() - start;
  };
  const samples = new Map<string, number[]>();
  const add = (key: string, ms: number) => samples.set(key, [...(samples.get(key) ?? []), ms]);
  // Warm-up (JIT, plans) with the guard on and off, not measured.
  for (const enabled of [true, false]) {
    await guard(enabled);
    for (let i = 0; i < 50; i++) await patch(await create(), { op: "replace", path: "nickName", value: "w" });
  }
  let next = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const enabled of round % 2 === 0 ? [true, false] : [false, true]) {
      await guard(enabled);
      const setting = enabled ? "on" : "off";
      for (let i = 0; i < PER_ROUND; i++) add(`create ${setting}`, await timed(create));
      for (let i = 0; i < PER_ROUND; i++) {
        const id = seeded[(round * PER_ROUND + i) % seeded.length] ?? "";
        add(`patch ${setting}`, await timed(() => patch(id, { op: "replace", path: "nickName", value: `r${round}` })));
      }
      for (let i = 0; i < PER_ROUND; i++) {
        const id = seeded[next++] ?? (await create());
        add(`deactivate ${setting}`, await timed(() => patch(id, { op: "replace", path: "active", value: false })));
      }
    }
  }
  const lines = [`${ROUNDS} rounds × ${PER_ROUND} requests per operation and setting, ${SEED} users seeded`];
  for (const op of ["create", "patch", "deactivate"]) {
    const on = summarize(samples.get(`${op} on`) ?? []);
    const off = summarize(samples.get(`${op} off`) ?? []);
    lines.push(
      `${op}: guard on p50 ${on.p50.toFixed(2)} ms (p90 ${on.p90.toFixed(2)}), off p50 ${off.p50.toFixed(2)} ms ` +
        `(p90 ${off.p90.toFixed(2)}): on − off ${(on.p50 - off.p50).toFixed(2)} ms`,
    );
  }
  process.stdout.write(`${lines.join("\n")}\n`);
} finally {
  await roster.close();
}
