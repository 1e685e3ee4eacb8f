import { mkdtemp, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { waitReady } from "./lib/child.js";
import { ADMIN_TOKEN, ROOT, startRoster } from "./lib/roster.js";
import { startCeiling } from "./lib/ceiling.js";
import { Cleanup, keepSignalListeners, stopOnSignals } from "./lib/cleanup.js";
import { type BenchConfig, BenchConfigError, loadBenchConfig } from "./lib/config.js";
import { type CpuReader, postgresCpuReader, processCpuMs } from "./lib/cpu.js";
import { type Endpoint, openPool } from "./lib/http.js";
import type { OpContext } from "./lib/ops.js";
import { startDatabase, vacuumAnalyzeDatabase } from "./lib/postgres.js";
import { startReceiver } from "./lib/receiver.js";
import { type BenchReport, betterCeiling, type OpReport, ratiosTo, withRatio, writeReport } from "./lib/report.js";
import { compareRequestLog, formatComparison } from "./lib/request-log-compare.js";
import { createOrganization, createScimClient, setRequestLog } from "./lib/scim.js";
import { type SeedResult, seedGroups, seedUsers } from "./lib/seed.js";
import { runOperations, summaryLine } from "./lib/run-ops.js";
import { formatTable } from "./lib/table.js";
import { startPgBouncer } from "../test/helpers/pgbouncer.js";
import { checkTargets } from "./lib/targets.js";
import { measureWebhook } from "./lib/webhook.js";
import { measureFeed } from "./lib/feed.js";

const RESULTS_DIR = join(ROOT, "bench", "results");
/** Hard bound on a run: whatever happens, everything is stopped by then. */
const RUN_LIMIT_MS = 20 * 60_000;
const CEILING_FIRST_WARMUP_MS = 3_000;

const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

async function main(): Promise<void> {
  const config = loadBenchConfig(process.env);
  const cleanup = new Cleanup();
  stopOnSignals(cleanup);
  const watchdog = setTimeout(() => {
    log(`the run exceeded ${RUN_LIMIT_MS / 60_000} minutes: stopping everything`);
    void cleanup.run().finally(() => process.exit(124));
  }, RUN_LIMIT_MS);
  try {
    const report = await bench(config, cleanup);
    process.stdout.write(`\n${formatTable(report)}\n`);
    log(`results written to ${await writeReport(RESULTS_DIR, report)}`);
  } finally {
    clearTimeout(watchdog);
    await cleanup.run();
  }
}

async function bench(config: BenchConfig, cleanup: Cleanup): Promise<BenchReport> {
  const startedAt = performance.now();
  const date = new Date().toISOString();
  const loadStart = loadavg();

  const database = await keepSignalListeners(() => startDatabase(config.databaseUrl, cleanup));
  log(`PostgreSQL: ${database.description}`);

  const dataDir = await mkdtemp(join(tmpdir(), "roster-bench-"));
  cleanup.add("Roster data dir", () => rm(dataDir, { recursive: true, force: true }));
  const roster = await startRoster(await rosterDatabaseUrl(database.url, cleanup), dataDir);
  cleanup.add("Roster", () => roster.stop());
  await waitReady(roster.url, 60_000);
  log(`Roster ready at ${roster.url} (pid ${roster.pid})`);
  const rosterCpu: CpuReader = () => processCpuMs(roster.pid);
  const postgres = await postgresCpuReader(database.url);

  const receiver = await startReceiver();
  cleanup.add("webhook receiver", () => receiver.close());
  const pool = openPool(roster.url, config.seedConcurrency + 4);
  cleanup.add("set-up connections", () => pool.close());

  const admin: Endpoint = {
    origin: roster.url,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
  };
  const organizationId = await createOrganization(pool, admin, "Bench");
  const plain = await createScimClient(pool, admin, organizationId, "bench-scim-secret-plain");
  const hooked = await createScimClient(pool, admin, organizationId, "bench-scim-secret-hooked", {
    url: receiver.url,
    secret: "bench-webhook-secret-0123456789abcdef",
  });

  log(`seeding ${config.users} users and ${config.groups} groups, ${config.seedConcurrency} in flight`);
  const users = await seedUsers(pool, plain, config.users, config.seedConcurrency);
  const groups = await seedGroups(pool, plain, config.groups, config.seedConcurrency);
  log(`seeded ${seedLine("users", users)}; ${seedLine("groups", groups)}`);
  if (config.requestLog === "all" || config.requestLog === "off") {
    await setRequestLog(pool, admin, plain.clientId, config.requestLog);
    log(`request log of the measured client: ${config.requestLog}`);
  }
  const feed = await measureFeed(pool, admin, organizationId);
  log(
    feed.status === "ok"
      ? `events feed: ${feed.events} events in ${feed.pages} pages of ${feed.pageSize}, ` +
          `${Math.round(feed.eventsPerSecond)} events/s for one consumer`
      : `events feed: ${feed.reason}`,
  );
  const vacuumMs = await vacuumAnalyzeDatabase(database.url);
  log(`VACUUM ANALYZE after seeding: ${Math.round(vacuumMs)} ms`);

  const ceiling = await startCeiling(
    { root: ROOT, config, databaseUrl: database.url, organizationId, users: users.created, postgresCpu: postgres.read },
    cleanup,
  );
  // A longer warm-up the first time: JIT, and the app's PostgreSQL connections being opened.
  const ceilingStart = await ceiling.measure(Math.max(config.warmupMs, CEILING_FIRST_WARMUP_MS));
  log(`ceiling: ${summaryLine(ceilingStart)}`);

  const ctx: OpContext = {
    pool,
    target: plain,
    users: users.created,
    groups: groups.created,
    usersUnavailable: users.unavailable ?? (users.created.length === 0 ? "no user could be seeded" : undefined),
    groupsUnavailable: groups.unavailable ?? (groups.created.length === 0 ? "no group could be seeded" : undefined),
  };
  const runOps = () =>
    runOperations({
      config,
      ctx,
      rosterCpu,
      postgresCpu: postgres.read,
      log,
      assertAlive: () => {
        if (!Number.isFinite(rosterCpu())) throw new Error(`Roster exited:\n${roster.tail().join("\n")}`);
      },
    }).catch((e: unknown) => {
      // A connection refused mid-run is usually Roster gone: say what it last printed.
      throw new Error(
        `${e instanceof Error ? e.message : String(e)}\nRoster's last lines:\n${roster.tail().join("\n")}`,
      );
    });
  let ops: OpReport[];
  if (config.requestLog === "compare") {
    const compared = await compareRequestLog({
      rounds: config.rounds,
      setMode: (mode) => setRequestLog(pool, admin, plain.clientId, mode),
      runOps,
      log,
    });
    ops = compared.last;
    process.stdout.write(`\nRequest log, errors vs all:\n${formatComparison(compared.table)}\n`);
  } else {
    ops = await runOps();
  }

  const webhook = config.ops.includes("webhook")
    ? await measureWebhook({
        pool,
        plain,
        hooked,
        receiver,
        users: users.created,
        connections: config.connections,
        warmupMs: config.warmupMs,
        durationMs: config.durationMs,
        serverCpu: rosterCpu,
        postgresCpu: postgres.read,
      })
    : ({ status: "skipped" } as const);
  if (webhook.status !== "skipped") log(`webhook: ${webhook.status === "ok" ? "measured" : webhook.reason}`);

  // Measured again at the end: a drift between the two says the machine's load changed during the run.
  const ceilingEnd = await ceiling.measure();
  log(`ceiling (end): ${summaryLine(ceilingEnd)}`);
  const reference = betterCeiling(ceilingStart, ceilingEnd);

  const { databaseUrl: _omitted, ...shownConfig } = config;
  return {
    date,
    machine: {
      nproc: cpus().length,
      memoryMiB: Math.round(totalmem() / 2 ** 20),
      cpu: cpus()[0]?.model ?? "unknown",
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
    },
    config: shownConfig,
    database: `PostgreSQL ${database.engine}: ${database.description}`,
    postgresCpuScope: postgres.scope,
    loadAverage: { start: loadStart, end: loadavg() },
    seeding: { users: seedSummary(users), groups: seedSummary(groups) },
    ceilingStart,
    ceilingEnd,
    ceiling: reference,
    ceilingNote: ceiling.note,
    ops: ops.map((op) => withRatio(op, reference)),
    webhook,
    feed,
    ...(webhook.status === "ok"
      ? { webhookRatios: { without: ratiosTo(webhook.without, reference), with: ratiosTo(webhook.with, reference) } }
      : {}),
    targets: checkTargets(ops, reference, webhook),
    rosterErrorLines: roster.errorLines(),
    totalSeconds: (performance.now() - startedAt) / 1000,
  };
}

/**
 * BENCH_POOLING=transaction: Roster reaches the bench database through a PgBouncer in transaction mode (20 server
 * connections), with ROSTER_DATABASE_POOLING=transaction, to measure what that mode costs. The ceiling stays direct.
 */
async function rosterDatabaseUrl(url: string, cleanup: Cleanup): Promise<string> {
  if (process.env.BENCH_POOLING !== "transaction") return url;
  if (!url.startsWith("postgres")) throw new Error("BENCH_POOLING=transaction needs ROSTER_DATABASE_URL");
  const bouncer = await startPgBouncer(url, 20);
  cleanup.add("PgBouncer", () => bouncer.stop());
  log("Roster reaches PostgreSQL through PgBouncer (transaction pooling)");
  return bouncer.url(new URL(url).pathname.slice(1));
}

function seedLine(what: string, s: SeedResult): string {
  if (s.unavailable !== undefined) return `${what}: unavailable (${s.unavailable})`;
  const rate = s.ms > 0 ? ` at ${((s.created.length * 1000) / s.ms).toFixed(0)}/s` : "";
  const failed = s.failures > 0 ? `, ${s.failures} failed (${s.firstFailure ?? "?"})` : "";
  return `${s.created.length} ${what}${rate}${failed}`;
}

function seedSummary(s: SeedResult): Record<string, unknown> {
  return {
    created: s.created.length,
    failures: s.failures,
    seconds: s.ms / 1000,
    ...(s.unavailable === undefined ? {} : { unavailable: s.unavailable }),
    ...(s.firstFailure === undefined ? {} : { firstFailure: s.firstFailure }),
  };
}

// `npm run bench -- --peer polis` is the peer comparison (bench/peers/run.ts), Polis being the one peer it knows.
if (process.argv.includes("--peer")) await import("./peers/run.js");
else
  main().catch((e: unknown) => {
    if (e instanceof BenchConfigError) process.stderr.write(`bench: bad settings:\n${e.message}\n`);
    else process.stderr.write(`bench: failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
