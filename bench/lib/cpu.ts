import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import pg from "pg";

interface ProcStat {
  readonly pid: number;
  readonly ppid: number;
  /** utime + stime, in clock ticks. */
  readonly self: number;
  /** cutime + cstime: CPU of waited-for children that have exited (PostgreSQL backends that ended). */
  readonly children: number;
}

const TICK_MS = 1000 / clockTicksPerSecond();

function clockTicksPerSecond(): number {
  try {
    const ticks = Number.parseInt(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim(), 10);
    return Number.isInteger(ticks) && ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
}

function readStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: fields are counted from its closing parenthesis.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const num = (i: number) => Number.parseInt(fields[i] ?? "0", 10);
  // fields[0] is field 3 (state): ppid = 4, utime = 14, stime = 15, cutime = 16, cstime = 17.
  return { pid, ppid: num(1), self: num(11) + num(12), children: num(13) + num(14) };
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}

/** CPU milliseconds a process has used so far (its threads included), or NaN when it is gone. */
export function processCpuMs(pid: number): number {
  const stat = readStat(pid);
  return stat === undefined ? Number.NaN : stat.self * TICK_MS;
}

/** A reader of the CPU milliseconds used so far by a group of processes. */
export type CpuReader = () => number;

export const unavailableCpu: CpuReader = () => Number.NaN;

/**
 * The CPU of the PostgreSQL server behind `url`: its postmaster (the parent of our backend) and every process under
 * it, plus the CPU of the backends that have exited (the postmaster's cutime/cstime). When the server is not on
 * this machine (the backend pid is not a local postgres), every process whose cmdline names postgres.
 */
export async function postgresCpuReader(url: string): Promise<{ read: CpuReader; scope: string }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let postmaster: number | undefined;
  try {
    const result = await client.query<{ pid: number }>("select pg_backend_pid() as pid");
    // Read while the backend lives: it exits with this connection.
    const backend = result.rows[0]?.pid ?? 0;
    const parent = readStat(backend)?.ppid;
    if (parent !== undefined && cmdline(backend).includes("postgres") && cmdline(parent).includes("postgres")) {
      postmaster = parent;
    }
  } finally {
    await client.end();
  }
  if (postmaster !== undefined) {
    const root = postmaster;
    return { read: () => treeCpuMs(root), scope: `postmaster ${root} and its children` };
  }
  return { read: allPostgresCpuMs, scope: 'every process whose cmdline contains "postgres"' };
}

function allStats(): ProcStat[] {
  const stats: ProcStat[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number.parseInt(entry, 10));
    if (stat !== undefined) stats.push(stat);
  }
  return stats;
}

/** CPU milliseconds of a process and every process under it (exited, waited-for children included). */
export function processTreeCpuMs(root: number): number {
  return treeCpuMs(root);
}

function treeCpuMs(root: number): number {
  const stats = allStats();
  const inTree = new Set<number>([root]);
  // Children are listed after their parents almost always; a few passes settle the rest.
  for (let changed = true; changed; ) {
    changed = false;
    for (const s of stats) {
      if (!inTree.has(s.pid) && inTree.has(s.ppid)) {
        inTree.add(s.pid);
        changed = true;
      }
    }
  }
  let ticks = 0;
  for (const s of stats) {
    if (!inTree.has(s.pid)) continue;
    ticks += s.self;
    if (s.pid === root) ticks += s.children;
  }
  return ticks * TICK_MS;
}

function allPostgresCpuMs(): number {
  let ticks = 0;
  for (const s of allStats()) {
    if (!cmdline(s.pid).includes("postgres")) continue;
    ticks += s.self;
    if (!cmdline(s.ppid).includes("postgres")) ticks += s.children;
  }
  return ticks * TICK_MS;
}
