/**
 * `npm run bench:peers`: the same SCIM workload against Roster and Ory Polis in one run, on one PostgreSQL, and the
 * ratio table. Each operation is measured on Roster and then on Polis before the next one starts, so a change in
 * the machine's load during the run touches both sides of a ratio alike.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { waitReady } from "../lib/child.js";
import { Cleanup, keepSignalListeners, stopOnSignals } from "../lib/cleanup.js";
import { BenchConfigError, loadBenchConfig, type OpName } from "../lib/config.js";
import { type CpuReader, postgresCpuReader, processCpuMs } from "../lib/cpu.js";
import { type Endpoint, openPool, send } from "../lib/http.js";
import { type Measurement, measure } from "../lib/measure.js";
import { OPERATIONS, type OpContext } from "../lib/ops.js";
import { startDatabase, vacuumAnalyzeDatabase } from "../lib/postgres.js";
import { ADMIN_TOKEN, startRoster } from "../lib/roster.js";
import { createOrganization, createScimClient, type ScimTarget } from "../lib/scim.js";
import { seedGroups, seedUsers } from "../lib/seed.js";
import { summaryLine } from "../lib/run-ops.js";
import { createPolisDirectory, installPolis, POLIS_VERSION, siblingDatabase, startPolis } from "./polis.js";
import { formatPeerTable, PEER_NOTES, type PeerRow, writePeerReport } from "./table.js";

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

interface Side {
  readonly name: string;
  readonly ctx: OpContext;
  readonly cpu: CpuReader;
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

    const polis = await startPolis(polisDir, await siblingDatabase(database.url, "polis_bench", cleanup));
    cleanup.add("Polis", () => polis.stop());
    const polisTarget = await createPolisDirectory(polis.url);
    const polisPool = openPool(polis.url, config.seedConcurrency + 4);
    cleanup.add("Polis connections", () => polisPool.close());
    log(`Roster at ${roster.url}, Polis ${POLIS_VERSION} at ${polis.url}`);

    const sides: Side[] = [];
    for (const [name, pool, target, pid] of [
      ["Roster", rosterPool, rosterTarget, roster.pid],
      ["Polis", polisPool, polisTarget, polis.pid],
    ] as const) {
      log(`${name}: seeding ${config.users} users and ${config.groups} groups`);
      const users = await seedUsers(pool, target, config.users, config.seedConcurrency);
      const groups = await seedGroups(pool, target, config.groups, config.seedConcurrency);
      log(`${name}: ${users.created.length} users (${users.failures} failed), ${groups.created.length} groups`);
      sides.push({ name, ctx: context(pool, target, users.created, groups.created), cpu: () => processCpuMs(pid) });
    }
    await vacuumAnalyzeDatabase(database.url);
    await vacuumAnalyzeDatabase(new URL("/polis_bench", database.url).toString());

    const rows: PeerRow[] = [];
    for (const op of ops) {
      const def = OPERATIONS.find((d) => d.name === op);
      if (def === undefined) continue;
      const results: (Measurement | string)[] = [];
      for (const side of sides) {
        const prepared = await def.prepare(side.ctx);
        if (prepared.kind === "unavailable") {
          results.push(prepared.reason);
          continue;
        }
        const probe = await send(side.ctx.pool, side.ctx.target, prepared.next(-1));
        if (probe.status > 299) {
          results.push(`probe answered ${probe.status}: ${probe.text.slice(0, 120)}`);
          continue;
        }
        const m = await measure({
          endpoint: side.ctx.target,
          connections: config.connections,
          warmupMs: config.warmupMs,
          durationMs: config.durationMs,
          next: prepared.next,
          serverCpu: side.cpu,
          postgresCpu: postgres.read,
        });
        log(`${op} ${side.name}: ${summaryLine(m)}`);
        results.push(m);
      }
      const [roster, peer] = results;
      rows.push({ op, describe: def.describe, roster, peer, note: PEER_NOTES[op] });
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
      },
      rows,
    };
    process.stdout.write(`\n${formatPeerTable(report)}\n`);
    log(`results written to ${await writePeerReport(report)}`);
  } finally {
    await cleanup.run();
  }
}

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
