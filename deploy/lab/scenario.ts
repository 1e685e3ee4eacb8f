/**
 * The lab's scenarios (run by deploy/lab/run.sh, which sets the environment), each with an IdP-like SCIM load
 * through the load balancer, its own organization, SCIM client and webhook path on one verifying receiver:
 *
 * - failover: kill -9 of the primary PostgreSQL node (its Patroni and its postmaster), its return as the standby,
 *   later a kill -9 of one Roster instance and its restart;
 * - all-instances: kill -9 of all three Roster instances at once in the middle of the load, and their restart;
 * - failback: a failover, and once the old primary is the synchronous standby again, a failover back to it.
 *
 * Each scenario's verdict compares every 2xx write with the current primary, the events feed and the verified
 * deliveries (check.ts). The report (Markdown) is rewritten to $LAB/report.md after every scenario and printed at
 * the end; the process exits 1 when any scenario failed its checks or did not finish.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import pg from "pg";
import { type Latency, judge, outboxLeft, readDatabase, readFeed } from "./check.js";
import { Load } from "./load.js";
import { type Receiver, startReceiver } from "./receiver.js";

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === "") throw new Error(`${name} is not set (run deploy/lab/run.sh)`);
  return value;
};
const LAB = env("LAB");
const ROOT = env("LAB_ROOT");
const LB = `http://127.0.0.1:${env("ROSTER_LB")}`;
const ADMIN_TOKEN = env("ADMIN_TOKEN");
const ROSTER_PORTS = env("LAB_ROSTER_PORTS").split(" ").map(Number);
interface Node {
  readonly name: "pg1" | "pg2";
  readonly api: number;
  readonly port: number;
}
const NODES: readonly Node[] = [
  { name: "pg1", api: Number(env("API1")), port: Number(env("PG1")) },
  { name: "pg2", api: Number(env("API2")), port: Number(env("PG2")) },
];
const WORKERS = Number(process.env.LAB_WORKERS ?? 6);
const PHASE_SECONDS = Number(process.env.LAB_PHASE_SECONDS ?? 12);
/** Bound on every wait for the cluster (promotion, rejoin, restart): generous for a busy 2-core machine. */
const WAIT_MS = Number(process.env.LAB_WAIT_SECONDS ?? 180) * 1000;
const STRICT = env("SYNC_STRICT") === "true";
/**
 * After a database failover, every event committed once writes succeed again must be delivered within this of its
 * write's 2xx (Roster's promise: an outage's leftover claims are settled as soon as the database answers, not after
 * their lease). A scenario fails otherwise. Faults of Roster instances are not bound by it: a killed instance's
 * claims wait for its heartbeat to go stale (5 s).
 */
const DELIVERY_BOUND_MS = Number(process.env.LAB_DELIVERY_BOUND_SECONDS ?? 2) * 1000;
const SCENARIOS = (process.env.LAB_SCENARIOS ?? "failover,all-instances,failback").split(",");

const started = Date.now();
const say = (line: string): void =>
  void process.stdout.write(`[scenario ${((Date.now() - started) / 1000).toFixed(1)} s] ${line}\n`);
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const secs = (ms: number | undefined): string => (ms === undefined ? "never" : `${(ms / 1000).toFixed(1)} s`);

// --- the cluster ----------------------------------------------------------------------------------------------
async function status(url: string): Promise<number> {
  const res = await fetch(url, { signal: AbortSignal.timeout(1000) }).catch(() => undefined);
  await res?.arrayBuffer().catch(() => undefined);
  return res?.status ?? 0;
}
async function leader(): Promise<Node | undefined> {
  for (const node of NODES) if ((await status(`http://127.0.0.1:${node.api}/primary`)) === 200) return node;
  return undefined;
}
const isSyncStandby = async (node: Node): Promise<boolean> =>
  (await status(`http://127.0.0.1:${node.api}/sync`)) === 200;
const readyEverywhere = async (): Promise<boolean> =>
  (await Promise.all(ROSTER_PORTS.map((p) => status(`http://127.0.0.1:${p}/health/ready`)))).every((s) => s === 200);

/** Polls until `test` holds; the time it first held, or undefined after `limit` ms. */
async function until(test: () => Promise<boolean> | boolean, limit = WAIT_MS): Promise<number | undefined> {
  const from = Date.now();
  while (Date.now() - from < limit) {
    if (await test()) return Date.now();
    await pause(100);
  }
  return undefined;
}

const pidOf = (name: string): number => Number(readFileSync(`${LAB}/${name}.pid`, "utf8").trim());
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
function kill(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}
/** kill -9 of a node's Patroni and its postmaster, as when its machine dies. */
function killNode(node: Node): void {
  const postmaster = Number(readFileSync(`${LAB}/${node.name}/postmaster.pid`, "utf8").split("\n")[0]);
  kill(pidOf(`patroni-${node.name}`));
  kill(postmaster);
}
function start(what: "patroni" | "roster", which: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", [`${ROOT}/deploy/lab/start.sh`, what, which], { stdio: "inherit" });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`start.sh ${what} ${which}: ${code}`))));
  });
}

/** Why an instance may not come up: sessions waiting on an advisory lock (Roster's migrations take one). */
async function lockDiagnosis(): Promise<string> {
  const primary = await leader();
  if (primary === undefined) return " (no primary)";
  const db = new pg.Client({ host: "127.0.0.1", port: primary.port, user: "postgres", database: "roster" });
  try {
    await db.connect();
    const { rows } = await db.query<{ waiting: number; held_idle: number }>(
      `select count(*) filter (where not l.granted)::int as waiting,
              count(*) filter (where l.granted and a.state = 'idle')::int as held_idle
         from pg_locks l join pg_stat_activity a using (pid) where l.locktype = 'advisory'`,
    );
    const r = rows[0];
    return r === undefined || r.waiting === 0
      ? ""
      : `: ${r.waiting} sessions wait on an advisory lock, held by ${r.held_idle} idle (pooled) connection(s) — the migration lock left behind by a transaction pooler`;
  } catch (e) {
    return ` (${(e as Error).message})`;
  } finally {
    await db.end().catch(() => undefined);
  }
}

/** Before a scenario: a leader, a synchronous standby, every instance ready. */
async function healthy(): Promise<void> {
  const ok = await until(async () => {
    const primary = await leader();
    const standby = NODES.find((n) => n !== primary);
    return primary !== undefined && standby !== undefined && (await isSyncStandby(standby)) && readyEverywhere();
  });
  if (ok === undefined)
    throw new Error("the lab is not healthy: no leader, no synchronous standby or an instance not ready");
}

// --- admin set-up ---------------------------------------------------------------------------------------------
async function admin<T>(path: string, body: unknown): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${LB}/v2alpha1/admin/${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    if (res.ok) return (await res.json()) as T;
    const text = await res.text();
    if (res.status < 500 || attempt >= 5) throw new Error(`admin ${path}: ${res.status} ${text}`);
    await pause(1000);
  }
}

// --- one scenario ---------------------------------------------------------------------------------------------
interface Fault {
  readonly label: string;
  readonly at: number;
  /** A database fault: its post-recovery deliveries are bound by DELIVERY_BOUND_MS. */
  readonly database: boolean;
  /** When every writer had its first acknowledged write sent after the fault. */
  recoveredAt?: number | undefined;
  readonly notes: string[];
}
interface Context {
  readonly name: string;
  readonly load: Load;
  readonly faults: Fault[];
}

/** Waits until every writer had a 2xx for a write it sent after the fault; notes each writer's outage. */
async function recovery(ctx: Context, fault: Fault): Promise<void> {
  const firstOk = (w: number) => ctx.load.writes.find((r) => r.writer === w && r.ok && r.start >= fault.at);
  const all = await until(() => Array.from({ length: WORKERS }, (_, w) => firstOk(w)).every(Boolean));
  if (all !== undefined) {
    fault.recoveredAt = Math.max(...Array.from({ length: WORKERS }, (_, w) => firstOk(w)?.end ?? all));
  }
}

function faultFigures(ctx: Context, fault: Fault, next: number): string[] {
  const lines: string[] = [];
  const outages = Array.from({ length: WORKERS }, (_, w) => {
    const first = ctx.load.writes.find((r) => r.writer === w && r.ok && r.start >= fault.at);
    return first === undefined ? undefined : first.end - fault.at;
  });
  const known = outages.filter((o): o is number => o !== undefined).sort((a, b) => a - b);
  const recovered = known.length === outages.length;
  lines.push(
    `- write outage, from the kill to each writer's first acknowledged write: ${known.map((o) => (o / 1000).toFixed(1)).join(", ")} s` +
      `${recovered ? "" : ` (${outages.length - known.length} writers never recovered)`}; longest ${secs(known.at(-1))}`,
  );
  const lastRecovery = recovered ? fault.at + (known.at(-1) ?? 0) : next;
  const failed = ctx.load.failures.filter((r) => r.start >= fault.at && r.start < lastRecovery);
  if (failed.length > 0) {
    const times = failed.map((r) => r.end - r.start).sort((a, b) => a - b);
    const byStatus = new Map<string, number>();
    for (const r of failed) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
    lines.push(
      `- failed answers (reads and writes) until every writer recovered: ${[...byStatus].map(([s, n]) => `${s}: ${n}`).join(", ")}; answered in median ${secs(times[Math.floor(times.length / 2)])}, longest ${secs(times.at(-1))}`,
    );
  }
  const slowOk = ctx.load.writes
    .filter((r) => r.ok && r.end >= fault.at && r.start < next)
    .reduce((m, r) => Math.max(m, r.end - r.start), 0);
  lines.push(`- slowest acknowledged write from the kill on: ${secs(slowOk)}`);
  lines.push(...fault.notes.map((n) => `- ${n}`));
  return lines;
}

function latencyFigures(
  latencies: readonly Latency[],
  from: number,
  to: number,
): { n: number; p50: number; max: number; slowest: Latency | undefined } {
  const window = latencies.filter((l) => l.ackedAt >= from && l.ackedAt < to).sort((a, b) => a.ms - b.ms);
  const slowest = window.at(-1);
  return { n: window.length, p50: window[Math.floor(window.length / 2)]?.ms ?? 0, max: slowest?.ms ?? 0, slowest };
}

async function runScenario(
  receiver: Receiver,
  name: string,
  title: string,
  faults: (ctx: Context) => Promise<void>,
): Promise<{ lines: string[]; ok: boolean }> {
  await healthy();
  const org = await admin<{ id: string }>("organizations", { name: `Lab ${name}` });
  const path = `/hook/${name}`;
  const secret = secretOf(path);
  const client = await admin<{ client_id: string; secret: string }>("scimClients", {
    organization_id: org.id,
    webhook: { url: `http://127.0.0.1:${receiver.port}${path}`, secret },
  });
  say(`${name}: organization ${org.id}, SCIM client ${client.client_id}`);
  const load = new Load(`${LB}/scim/${client.client_id}/v2`, client.secret, name);
  const ctx: Context = { name, load, faults: [] };
  const begun = Date.now();
  load.start(WORKERS);
  await pause(PHASE_SECONDS * 1000);
  let aborted: string | undefined;
  try {
    await faults(ctx);
  } catch (e) {
    aborted = (e as Error).message;
    say(`${name}: aborted: ${aborted}`);
  }
  await load.stop();
  const stopped = Date.now();
  say(`${name}: load stopped; waiting for the webhook deliveries to drain`);

  const primary = (await until(async () => (await leader()) !== undefined)) === undefined ? undefined : await leader();
  if (primary === undefined) throw new Error("no primary to check against");
  const drained = await until(
    async () => (await outboxLeft(primary.port, client.client_id).catch(() => 1)) === 0,
    120_000,
  );
  const db = await readDatabase(primary.port, org.id, client.client_id);
  const feed = await readFeed(LB, ADMIN_TOKEN, org.id);
  const deliveries = receiver.deliveries(path);
  const verdict = judge(load, db, feed, deliveries);
  // Every instance the scenario did not kill must still be the process it was: none may have ended on its own.
  const died = ROSTER_PORTS.map((_, i) => i + 1).filter((i) => !alive(pidOf(`roster-${i}`)));
  // Per fault: the events committed in the 20 s after the first write succeeded again (ending 5 s before the next
  // fault at most: what that one delays is its own figure).
  const afterRecovery = ctx.faults.map((fault, i) => {
    if (fault.recoveredAt === undefined) return undefined;
    const firstOk = ctx.load.writes.find((r) => r.ok && r.start >= fault.at);
    const from = firstOk?.end ?? fault.recoveredAt;
    const next = ctx.faults[i + 1]?.at;
    const to = Math.min(from + 20_000, next === undefined ? stopped : next - 5_000);
    const figures = latencyFigures(verdict.latencies, from, to);
    return { from, to, figures, late: fault.database && figures.max > DELIVERY_BOUND_MS };
  });
  const lateFaults = afterRecovery.filter((a) => a?.late === true).length;
  const ok = verdict.ok && aborted === undefined && died.length === 0 && lateFaults === 0;

  const lines: string[] = [`### Scenario "${name}": ${title}`, ""];
  lines.push("| phase | answers |", "|---|---|");
  for (const [phase, byStatus] of load.answers) {
    const parts = [...byStatus.entries()].sort().map(([s, n]) => `${s}: ${n}`);
    lines.push(`| ${phase} | ${parts.join(", ")} |`);
  }
  lines.push("");
  ctx.faults.forEach((fault, i) => {
    lines.push(`**${fault.label}** (${secs(fault.at - begun)} into the load)`, "");
    lines.push(...faultFigures(ctx, fault, ctx.faults[i + 1]?.at ?? stopped), "");
  });
  const ack = [...verdict.acknowledged.entries()].map(([k, n]) => `${k} ${n}`).join(", ");
  const totalAck = [...verdict.acknowledged.values()].reduce((a, b) => a + b, 0);
  lines.push(`**Checks** (against the primary ${primary.name}, the events feed and the receiver)`, "");
  lines.push(
    `- acknowledged writes: ${totalAck} (${ack}); lost or wrong on the primary: **${verdict.lostWrites.length}**`,
  );
  lines.push(
    `- writes whose answer was lost (5xx, no answer): ${verdict.unknownWrites}; their creates found committed: ${verdict.unknownThatCommitted}; rows nobody wrote: ${verdict.unexplainedRows}; refused (4xx): ${load.refused.length}`,
  );
  lines.push(
    `- events expected (one per acknowledged change): ${verdict.expectedEvents}; in the feed: ${verdict.feedEvents} (missing **${verdict.feedMissing.length}**, listed twice ${verdict.feedDuplicates}, from writes whose answer was lost ${verdict.feedFromLostAnswers}, unexplained ${verdict.feedUnexplained.length})`,
  );
  lines.push(
    `- webhooks: ${verdict.deliveriesTotal} verified deliveries of ${verdict.deliveredDistinct} events; acknowledged changes never delivered **${verdict.webhookMissing.length}**; feed events never delivered **${verdict.feedUndelivered}**; delivered but not in the feed ${verdict.deliveredNotInFeed}; outbox left ${verdict.outbox}${drained === undefined ? " (did not drain within 120 s)" : ""}`,
  );
  lines.push(
    `- duplicates: by webhook-id ${verdict.duplicatesById} (the same event delivered again), by content ${verdict.duplicatesByContent} (one change delivered as two events)`,
  );
  // Steady: events acknowledged more than 5 s before the first fault, whose delivery no fault could interrupt.
  const steady = latencyFigures(verdict.latencies, begun, (ctx.faults[0]?.at ?? stopped) - 5_000);
  lines.push(
    `- delivery latency (2xx of the write → first verified delivery): steady ${steady.n} events, median ${secs(steady.p50)}, max ${secs(steady.max)}`,
  );
  ctx.faults.forEach((fault, i) => {
    const before = verdict.latencies.filter((l) => l.ackedAt < fault.at && l.ackedAt + l.ms > fault.at);
    if (before.length > 0) {
      const last = Math.max(...before.map((l) => l.ackedAt + l.ms));
      lines.push(
        `- events acknowledged before "${fault.label}" and delivered after it: ${before.length}, the last ${secs(last - fault.at)} after the kill`,
      );
    }
    const window = afterRecovery[i];
    if (window === undefined) return;
    const { from, to, figures: after } = window;
    const bound = fault.database ? ` (bound ${secs(DELIVERY_BOUND_MS)}${window.late ? ": **exceeded**" : ""})` : "";
    lines.push(
      `- events committed in the ${secs(to - from)} after the first write succeeded again ("${fault.label}"): ${after.n}, delivered within median ${secs(after.p50)}, max **${secs(after.max)}**${bound}`,
    );
    // A late one is named, so that its event id can be followed through the instances' logs and the outbox.
    const slow = after.slowest;
    if (window.late && slow !== undefined) {
      lines.push(
        `  - the slowest: ${slow.key}, event ${slow.webhookId}, written ${secs(slow.ackedAt - fault.at)} after the kill, delivered ${secs(slow.ms)} later (${slow.sent} deliveries of that id)`,
      );
    }
  });
  lines.push(`- cursor pages: ${load.cursorPages}; refused cursors: ${load.cursorErrors}`);
  lines.push(
    `- Roster instances that ended without being killed: ${died.length === 0 ? "none" : `**${died.join(", ")}**`}`,
  );
  if (aborted !== undefined) lines.push(`- **the scenario did not finish**: ${aborted}`);
  for (const l of verdict.lostWrites.slice(0, 5)) lines.push(`  - lost: ${l}`);
  for (const k of verdict.feedMissing.slice(0, 5)) lines.push(`  - not in the feed: ${k}`);
  for (const k of verdict.feedUnexplained.slice(0, 5)) lines.push(`  - unexplained in the feed: ${k}`);
  for (const k of verdict.webhookMissing.slice(0, 5)) lines.push(`  - never delivered: ${k}`);
  lines.push(`- verdict: **${ok ? "passed" : "FAILED"}**`, "");
  return { lines, ok };
}

// --- the scenarios' faults ------------------------------------------------------------------------------------
async function failover(ctx: Context, label: string, phaseAfter: string): Promise<Node> {
  const primary = await leader();
  const standby = NODES.find((n) => n !== primary);
  if (primary === undefined || standby === undefined) throw new Error("no primary before the failover");
  say(`${ctx.name}: kill -9 of the primary ${primary.name} (its Patroni and its postmaster)`);
  ctx.load.phase = label;
  const fault: Fault = {
    label: `${label}: kill -9 of the primary ${primary.name}`,
    at: Date.now(),
    database: true,
    notes: [],
  };
  ctx.faults.push(fault);
  killNode(primary);
  const promoted = await until(async () => (await leader())?.name === standby.name);
  if (promoted === undefined) throw new Error(`${standby.name} was not promoted within ${secs(WAIT_MS)}`);
  fault.notes.push(`${standby.name} promoted ${secs(promoted - fault.at)} after the kill`);
  say(`${ctx.name}: ${standby.name} promoted after ${secs(promoted - fault.at)}; restarting ${primary.name}'s Patroni`);
  // The old primary's machine comes back at once: its Patroni rewinds it and it follows the new primary. Until it is
  // the synchronous standby, synchronous_mode_strict makes every commit wait (without it, commits are acknowledged
  // with no standby meanwhile).
  await start("patroni", primary.name);
  const rejoinedP = until(() => isSyncStandby(primary));
  await recovery(ctx, fault);
  ctx.load.phase = phaseAfter;
  const rejoined = await rejoinedP;
  if (rejoined === undefined) throw new Error(`${primary.name} did not rejoin as the synchronous standby`);
  fault.notes.push(
    `${primary.name} back as the synchronous standby ${secs(rejoined - fault.at)} after the kill (${secs(rejoined - promoted)} after the promotion: ${STRICT ? "commits wait for it" : "commits are acknowledged without a standby until then"})`,
  );
  fault.notes.push(
    `every writer recovered ${secs(fault.recoveredAt === undefined ? undefined : fault.recoveredAt - fault.at)} after the kill`,
  );
  return standby;
}

async function killInstances(ctx: Context, label: string, indexes: number[], phaseAfter: string): Promise<void> {
  const pids = indexes.map((i) => pidOf(`roster-${i}`));
  say(
    `${ctx.name}: kill -9 of Roster instance${indexes.length > 1 ? "s" : ""} ${indexes.join(", ")} (pid ${pids.join(", ")})`,
  );
  ctx.load.phase = label;
  const fault: Fault = { label, at: Date.now(), database: false, notes: [] };
  ctx.faults.push(fault);
  for (const pid of pids) kill(pid);
  await Promise.all(indexes.map((i) => start("roster", String(i))));
  const ready = await until(readyEverywhere);
  if (ready === undefined)
    throw new Error(`the restarted instances were not all ready within ${secs(WAIT_MS)}${await lockDiagnosis()}`);
  fault.notes.push(
    `every instance restarted and ready ${secs(ready === undefined ? undefined : ready - fault.at)} after the kill`,
  );
  await recovery(ctx, fault);
  fault.notes.push(
    `every writer recovered ${secs(fault.recoveredAt === undefined ? undefined : fault.recoveredAt - fault.at)} after the kill`,
  );
  ctx.load.phase = phaseAfter;
}

const SCENARIO_DEFS: Record<string, { title: string; faults: (ctx: Context) => Promise<void> }> = {
  failover: {
    title: "the primary dies, later one Roster instance",
    faults: async (ctx) => {
      await failover(ctx, "primary killed", "after failover");
      await pause(PHASE_SECONDS * 1000);
      await killInstances(ctx, "Roster instance 2 killed", [2], "after its restart");
      await pause(PHASE_SECONDS * 1000);
    },
  },
  "all-instances": {
    title: "all three Roster instances killed at once mid-burst, and restarted",
    faults: async (ctx) => {
      await killInstances(ctx, "all instances killed", [1, 2, 3], "after the restart");
      await pause(PHASE_SECONDS * 1000);
    },
  },
  failback: {
    title: "a failover, then a failover back (failback)",
    faults: async (ctx) => {
      await failover(ctx, "primary killed", "after failover");
      await pause(PHASE_SECONDS * 1000);
      await failover(ctx, "new primary killed (failback)", "after failback");
      await pause(PHASE_SECONDS * 1000);
    },
  },
};

/** Requests that are not deliveries: the receiver must answer them, count them and carry on. */
async function probeReceiver(port: number): Promise<void> {
  const base = `http://127.0.0.1:${port}`;
  await fetch(`${base}/`).catch(() => undefined);
  await fetch(`${base}/hook/nobody`, { method: "POST", body: "{}" }).catch(() => undefined);
  await fetch(`${base}/hook/${SCENARIOS[0]}`, { method: "POST", body: "not json" }).catch(() => undefined);
  await new Promise<void>((resolve) => {
    const socket = connect(port, "127.0.0.1", () => socket.end("NOT HTTP\r\n\r\n"));
    socket.on("close", () => resolve());
    socket.on("error", () => resolve());
  });
}

// --- the run --------------------------------------------------------------------------------------------------
const receiver = await startReceiver();
const secrets = new Map(SCENARIOS.map((name) => [`/hook/${name}`, `whsec_${randomBytes(32).toString("base64")}`]));
for (const [path, secret] of secrets) receiver.expect(path, secret);
const secretOf = (path: string): string => secrets.get(path) ?? "";
const header = [
  "## Lab report",
  "",
  `Run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC. Load per scenario: ${WORKERS} writers (user create, PATCH, PUT, delete; group create, rename; member add, remove) and 1 cursor walker through the round-robin front door, ${PHASE_SECONDS} s a phase. PgBouncer query_wait_timeout ${env("QUERY_WAIT_TIMEOUT")} s, ROSTER_DATABASE_CONNECT_TIMEOUT_MS ${env("ROSTER_CONNECT_TIMEOUT_MS")}, Patroni synchronous_mode_strict: ${env("SYNC_STRICT")}. Webhook receiver on port ${receiver.port} (a free one).`,
  "",
];
const sections: string[][] = [];
const writeReport = (footer: string[] = []): void =>
  writeFileSync(`${LAB}/report.md`, `${[...header, ...sections.flat(), ...footer].join("\n")}\n`);
writeReport();
await probeReceiver(receiver.port);

let allOk = true;
for (const name of SCENARIOS) {
  const def = SCENARIO_DEFS[name];
  if (def === undefined) throw new Error(`unknown scenario ${name}`);
  try {
    const result = await runScenario(receiver, name, def.title, def.faults);
    sections.push(result.lines);
    allOk &&= result.ok;
  } catch (e) {
    // The lab itself is broken (no primary, an instance that does not come back): later scenarios would say nothing.
    sections.push([`### Scenario "${name}"`, "", `**did not finish**: ${(e as Error).message}`, ""]);
    writeReport();
    allOk = false;
    break;
  }
  writeReport();
}
const ignored = [...receiver.ignored.entries()].map(([reason, n]) => `${reason}: ${n}`).join("; ");
const footer = [
  "### The receiver",
  "",
  `- deliveries with a signature that did not verify: **${receiver.badSignatures.length}**${receiver.badSignatures.length > 0 ? ` (${receiver.badSignatures[0]?.reason})` : ""}`,
  `- other requests, ignored and counted (4 are the lab's own probes): ${ignored === "" ? "none" : ignored}`,
  "",
  `**${allOk && receiver.badSignatures.length === 0 ? "Every scenario passed." : "The lab FAILED."}**`,
];
writeReport(footer);
await receiver.close();
process.stdout.write(`\n${readFileSync(`${LAB}/report.md`, "utf8")}`);
process.exit(allOk && receiver.badSignatures.length === 0 ? 0 : 1);
