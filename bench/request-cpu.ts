/**
 * CPU per request by operation, in-process (`app.inject`: routing, hooks, validation, SQL, rendering; no sockets),
 * one request at a time so that nothing waits on anything else: Roster's CPU (this process, all its threads) and
 * PostgreSQL's (its backends and background processes, when the server is on this machine) per request, the median
 * of `ROUNDS` rounds of `REQUESTS` requests per operation, operations interleaved round by round.
 *
 * `ROSTER_DATABASE_URL=… npx tsx bench/request-cpu.ts`; `N` users are seeded first (default 2 000). Compare two
 * trees by running this script in each, one after the other, in one sitting.
 */
import { postgresCpuReader } from "./lib/cpu.js";
import { startInProcess } from "./lib/in-process.js";
import { seededUserName, userBody } from "./lib/scim.js";

const USERS = Number(process.env.N ?? 2000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const REQUESTS = Number(process.env.REQUESTS ?? 500);
/** A comma-separated subset of the operations (all by default): e.g. `OPS=put` for a CPU profile of one. */
const ONLY = process.env.OPS?.split(",");
/** This process's CPU (every thread), in milliseconds. */
const ownCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

interface Request {
  readonly method: "GET" | "POST" | "PUT" | "PATCH";
  readonly url: string;
  readonly payload?: unknown;
}

async function main(): Promise<void> {
  const roster = await startInProcess();
  try {
    const postgres =
      process.env.ROSTER_DATABASE_URL === undefined
        ? undefined
        : (await postgresCpuReader(process.env.ROSTER_DATABASE_URL)).read;
    const { base, headers } = await roster.scimClient();
    const inject = async (r: Request) => {
      const reply = await roster.app.inject({ method: r.method, url: r.url, headers, payload: r.payload as string });
      if (reply.statusCode > 299) throw new Error(`${r.method} ${r.url}: ${reply.statusCode} ${reply.body}`);
      return reply;
    };
    const ids: string[] = [];
    for (let n = 0; n < USERS; n++) {
      const reply = await inject({ method: "POST", url: `${base}/Users`, payload: userBody(seededUserName(n), n) });
      ids.push((reply.json() as { id: string }).id);
    }
    let created = 0;
    const ops: Record<string, (i: number) => Request> = {
      get: (i) => ({ method: "GET", url: `${base}/Users/${ids[i % USERS]}` }),
      filter: (i) => ({
        method: "GET",
        url: `${base}/Users?filter=${encodeURIComponent(`userName eq "${seededUserName(i % USERS)}"`)}`,
      }),
      patch: (i) => ({
        method: "PATCH",
        url: `${base}/Users/${ids[i % USERS]}`,
        payload: {
          schemas: [PATCH_SCHEMA],
          Operations: [
            { op: "replace", path: "active", value: i % 2 === 1 },
            { op: "replace", path: "displayName", value: `Patched ${i}` },
          ],
        },
      }),
      // A profile change: the write of a steady directory, which the deprovisioning guard never holds.
      rename: (i) => ({
        method: "PATCH",
        url: `${base}/Users/${ids[i % USERS]}`,
        payload: {
          schemas: [PATCH_SCHEMA],
          Operations: [{ op: "replace", path: "displayName", value: `Renamed ${i}` }],
        },
      }),
      put: (i) => ({
        method: "PUT",
        url: `${base}/Users/${ids[i % USERS]}`,
        payload: userBody(seededUserName(i % USERS), i % USERS, `Put ${i}`),
      }),
      create: () => {
        const n = USERS + created++;
        return { method: "POST", url: `${base}/Users`, payload: userBody(`new${n}@bench.example`, n) };
      },
    };
    const results: Record<string, { roster: number[]; postgres: number[] }> = {};
    let offset = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, next] of Object.entries(ops)) {
        if (ONLY !== undefined && !ONLY.includes(name)) continue;
        for (let i = 0; i < 20; i++) await inject(next(offset + i));
        offset += 20;
        const r0 = ownCpuMs();
        const p0 = postgres?.() ?? Number.NaN;
        for (let i = 0; i < REQUESTS; i++) await inject(next(offset + i));
        offset += REQUESTS;
        const entry = results[name] ?? { roster: [], postgres: [] };
        entry.roster.push((ownCpuMs() - r0) / REQUESTS);
        entry.postgres.push(((postgres?.() ?? Number.NaN) - p0) / REQUESTS);
        results[name] = entry;
      }
    }
    const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? Number.NaN;
    process.stdout.write(`| op | Roster CPU ms/req | PostgreSQL CPU ms/req | rounds (Roster) |\n|---|---:|---:|---|\n`);
    for (const [name, r] of Object.entries(results)) {
      process.stdout.write(
        `| ${name} | ${median(r.roster).toFixed(3)} | ${median(r.postgres).toFixed(3)} | ${r.roster.map((v) => v.toFixed(3)).join(", ")} |\n`,
      );
    }
  } finally {
    await roster.close();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`request-cpu: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
