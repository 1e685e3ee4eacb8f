/**
 * `npm run bench:peers`: the same SCIM workload against Roster and Ory Polis in one run, on one PostgreSQL, and the
 * ratio table: req/s and CPU per request (the server's process tree and its own database's PostgreSQL backends).
 * Each operation runs ROUNDS rounds (3), each measuring Roster and then Polis, so a change in the machine's load
 * touches both sides of a round's ratio alike; the table reports each ratio's lowest round.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { waitReady } from "../lib/child.js";
import { Cleanup, keepSignalListeners, stopOnSignals } from "../lib/cleanup.js";
import { type BenchConfig, BenchConfigError, loadBenchConfig, type OpName } from "../lib/config.js";
import { databaseBackendsCpu } from "../lib/backend-cpu.js";
import { type CpuReader, postgresCpuReader, processTreeCpuMs } from "../lib/cpu.js";
import { type Endpoint, openPool, send } from "../lib/http.js";
import { type Measurement, measure } from "../lib/measure.js";
import { OPERATIONS, type OpContext, type OpDefinition, type Preparation } from "../lib/ops.js";
import { startDatabase, vacuumAnalyzeDatabase } from "../lib/postgres.js";
import { ADMIN_TOKEN, startRoster } from "../lib/roster.js";
import { createOrganization, createScimClient, type ScimTarget } from "../lib/scim.js";
import { seedGroups, seedUsers } from "../lib/seed.js";
import { summaryLine } from "../lib/run-ops.js";
import { createPolisDirectory, installPolis, POLIS_VERSION, siblingDatabase, startPolis } from "./polis.js";
import { formatPeerTable, PEER_NOTES, type PeerRow, type PeerSide, writePeerReport } from "./table.js";

const log = (line: string) => process.stderr.write(`bench:peers: ${line}\n`);

/** The operations both servers have (Polis has no cursor paging); `webhook` is Roster's own measurement. */
const PEER_OPS: readonly OpName[] = [
  "get",
  "filter",
  "list_1",
  "list_4901",
  "patch",
  "put",
  "create",
  "group_create",
  "group_patch",
];

/** The unmeasured warm-up of each operation's first round on each server (later rounds: WARMUP). */
const FIRST_ROUND_WARMUP_MS = 5_000;

interface Side {
  readonly name: string;
  readonly ctx: OpContext;
  /** The server's process tree. */
  readonly cpu: CpuReader;
  /** The PostgreSQL backends of the server's own database (the whole server when they cannot be told apart). */
  readonly postgresCpu: CpuReader;
}

async function main(): Promise<void> {
  // 5 000 users by default: Polis reads every user of the directory on each list page.
  const peerAt = process.argv.indexOf("--peer");
  const peer = peerAt === -1 ? "polis" : process.argv[peerAt + 1];
  if (peer !== "polis") throw new BenchConfigError(`--peer: "${peer ?? ""}" is not a peer this bench knows (polis)`);
  const config = loadBenchConfig({ N: "5000", ...process.env });
  const ops = PEER_OPS.filter((op) => config.ops.includes(op));
  const cleanup = new Cleanup();
  stopOnSignals(cleanup);
  const startLoad = loadavg();
  try {
    const database = await keepSignalListeners(() => startDatabase(config.databaseUrl, cleanup));
    log(`PostgreSQL: ${database.description}`);
    const polisDir = await installPolis(log);
    const postgres = await postgresCpuReader(database.url);

    const dataDir = await mkdtemp(join(tmpdir(), "roster-peers-"));
    cleanup.add("Roster data dir", () => rm(dataDir, { recursive: true, force: true }));
    const roster = await startRoster(database.url, dataDir);
    cleanup.add("Roster", () => roster.stop());
    await waitReady(roster.url, 60_000);
    const rosterPool = openPool(roster.url, config.seedConcurrency + 4);
    cleanup.add("Roster connections", () => rosterPool.close());
    const admin: Endpoint = {
      origin: roster.url,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    };
    const organizationId = await createOrganization(rosterPool, admin, "Peers");
    const rosterTarget = await createScimClient(rosterPool, admin, organizationId, "bench-peers-scim-secret");

    const polisDatabase = await siblingDatabase(database.url, `polis_bench_${Date.now()}`, cleanup);
    const polis = await startPolis(polisDir, polisDatabase);
    cleanup.add("Polis", () => polis.stop());
    const polisTarget = await createPolisDirectory(polis.url);
    const polisPool = openPool(polis.url, config.seedConcurrency + 4);
    cleanup.add("Polis connections", () => polisPool.close());
    log(`Roster at ${roster.url}, Polis ${POLIS_VERSION} at ${polis.url}`);

    const sides: Side[] = [];
    for (const [name, pool, target, pid, url] of [
      ["Roster", rosterPool, rosterTarget, roster.pid, database.url],
      ["Polis", polisPool, polisTarget, polis.pid, polisDatabase],
    ] as const) {
      const backends = await databaseBackendsCpu(url);
      if (backends !== undefined) cleanup.add(`${name} backends CPU reader`, () => backends.close());
      log(`${name}: PostgreSQL CPU from ${backends?.scope ?? postgres.scope}`);
      log(`${name}: seeding ${config.users} users and ${config.groups} groups`);
      const users = await seedUsers(pool, target, config.users, config.seedConcurrency);
      const groups = await seedGroups(pool, target, config.groups, config.seedConcurrency);
      log(`${name}: ${users.created.length} users (${users.failures} failed), ${groups.created.length} groups`);
      sides.push({
        name,
        ctx: context(pool, target, users.created, groups.created),
        cpu: () => processTreeCpuMs(pid),
        postgresCpu: backends?.read ?? postgres.read,
      });
    }
    await vacuumAnalyzeDatabase(database.url);
    await vacuumAnalyzeDatabase(polisDatabase);

    const rounds = config.rounds;
    log(`measuring ${ops.join(", ")}: ${rounds} rounds each, Roster and Polis interleaved`);
    const rows: PeerRow[] = [];
    for (const op of ops) {
      const def = OPERATIONS.find((d) => d.name === op);
      if (def === undefined) continue;
      rows.push({
        op,
        describe: def.describe,
        note: PEER_NOTES[op],
        ...(await measureInterleaved(def, sides, rounds, config)),
      });
    }
    const report = {
      date: new Date().toISOString(),
      machine: { nproc: cpus().length, cpu: cpus()[0]?.model ?? "unknown", node: process.version },
      database: database.description,
      peer: `Ory Polis (@boxyhq/saml-jackson ${POLIS_VERSION}, SQL engine on the same PostgreSQL)`,
      config: {
        users: config.users,
        groups: config.groups,
        connections: config.connections,
        seconds: config.durationMs / 1000,
        rounds,
      },
      load: { start: startLoad, end: loadavg() },
      rows,
    };
    process.stdout.write(`\n${formatPeerTable(report)}\n`);
    log(`results written to ${await writePeerReport(report)}`);
  } finally {
    await cleanup.run();
  }
}

/**
 * Each round measures Roster, then Polis, back to back: a change in the machine's load touches both sides of a
 * round's ratio alike, and the rounds show how far the ratio moves.
 */
async function measureInterleaved(
  def: OpDefinition,
  sides: readonly Side[],
  rounds: number,
  config: BenchConfig,
): Promise<Pick<PeerRow, "roster" | "peer" | "rounds">> {
  const prepared: (Preparation | string)[] = [];
  for (const side of sides) {
    const p = await def.prepare(side.ctx);
    if (p.kind === "unavailable") {
      prepared.push(p.reason);
      continue;
    }
    const probe = await send(side.ctx.pool, side.ctx.target, p.next(-1));
    prepared.push(probe.status > 299 ? `probe answered ${probe.status}: ${probe.text.slice(0, 120)}` : p);
  }
  const measured: Measurement[][] = sides.map(() => []);
  for (let round = 1; round <= rounds; round++) {
    for (const [i, side] of sides.entries()) {
      if (typeof prepared[i] !== "object") continue;
      // Prepared again each round: a create then takes userNames no earlier round used.
      const p = round === 1 ? prepared[i] : await def.prepare(side.ctx);
      if (p === undefined || typeof p === "string" || p.kind !== "ready") continue;
      const m = await measure({
        endpoint: side.ctx.target,
        connections: config.connections,
        // A path seeding never ran (GET, PATCH, PUT) needs more than a second to reach V8's optimising tiers.
        warmupMs: round === 1 ? Math.max(config.warmupMs, FIRST_ROUND_WARMUP_MS) : config.warmupMs,
        durationMs: config.durationMs,
        next: p.next,
        serverCpu: side.cpu,
        postgresCpu: side.postgresCpu,
      });
      log(`${def.name} ${side.name} round ${round}: ${summaryLine(m)}, CPU ${cpuLine(m)}`);
      measured[i]?.push(m);
    }
  }
  const outcome = (i: number): PeerSide | string | undefined => {
    const p = prepared[i];
    if (typeof p === "string") return p;
    return measured[i]?.length ? { rounds: measured[i] ?? [] } : undefined;
  };
  return { roster: outcome(0), peer: outcome(1), rounds };
}

const cpuLine = (m: Measurement) =>
  `${m.serverCpuMsPerRequest.toFixed(3)} + ${m.postgresCpuMsPerRequest.toFixed(3)} ms/req (server + PostgreSQL)`;

function context(
  pool: OpContext["pool"],
  target: ScimTarget,
  users: OpContext["users"],
  groups: OpContext["groups"],
): OpContext {
  return {
    pool,
    target,
    users,
    groups,
    usersUnavailable: users.length === 0 ? "no user could be seeded" : undefined,
    groupsUnavailable: groups.length === 0 ? "no group could be seeded" : undefined,
  };
}

main().catch((e: unknown) => {
  if (e instanceof BenchConfigError) process.stderr.write(`bench:peers: bad settings:\n${e.message}\n`);
  else process.stderr.write(`bench:peers: failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
