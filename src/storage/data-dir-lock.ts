import { randomBytes } from "node:crypto";
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Logger } from "../platform/logger.js";

/** The file in ROSTER_DATA_DIR that names the Roster process owning it. */
export const LOCK_FILE = "roster.lock";

/** A second Roster on a data directory whose owner is alive: it must not touch the embedded cluster. */
export class DataDirInUseError extends Error {
  readonly pid: number;
  constructor(pid: number, dir: string) {
    super(`another Roster (pid ${pid}) is using ${dir}`);
    this.name = "DataDirInUseError";
    this.pid = pid;
  }
}

export interface DataDirLock {
  /** Removes the lock file if it is still this process's; idempotent, synchronous (it also runs on exit). */
  release(): void;
}

interface Holder {
  readonly pid: number;
  /** Start time of the process in clock ticks since boot (Linux /proc), to tell a reused PID from its owner. */
  readonly startTicks: number | null;
  readonly startedAt: string;
}

/**
 * One Roster per data directory: a lock file holding the owner's PID and start time, created atomically (written
 * aside, then hard-linked into place, so a reader never sees half of it). A lock whose owner is gone — a crash,
 * kill -9 — is stale: it is replaced, and the start goes on to recover the cluster as after any crash. A lock whose
 * owner lives refuses the start before anything in the directory is touched.
 */
export function lockDataDir(dir: string, logger: Logger): DataDirLock {
  const root = resolve(dir);
  mkdirSync(root, { recursive: true });
  const path = join(root, LOCK_FILE);
  const mine: Holder = { pid: process.pid, startTicks: startTicksOf(process.pid), startedAt: new Date().toISOString() };
  const text = `${JSON.stringify(mine)}\n`;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (tryCreate(path, text)) {
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        process.removeListener("exit", release);
        if (readHolder(path)?.pid === mine.pid) unlinkSync(path);
      };
      process.on("exit", release);
      return { release };
    }
    const holder = readHolder(path);
    if (holder !== undefined && isRunning(holder)) throw new DataDirInUseError(holder.pid, root);
    logger.warn(
      { pid: holder?.pid, since: holder?.startedAt },
      "removing the data directory lock of a Roster that is gone",
    );
    try {
      unlinkSync(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
  }
  const holder = readHolder(path);
  throw new DataDirInUseError(holder?.pid ?? 0, root);
}

function tryCreate(path: string, text: string): boolean {
  const aside = `${path}.${process.pid}.${randomBytes(4).toString("hex")}`;
  writeFileSync(aside, text, { mode: 0o600 });
  try {
    linkSync(aside, path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  } finally {
    unlinkSync(aside);
  }
}

function readHolder(path: string): Holder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as Partial<Holder>;
    if (typeof parsed.pid !== "number" || !Number.isInteger(parsed.pid) || parsed.pid <= 0) return undefined;
    return {
      pid: parsed.pid,
      startTicks: typeof parsed.startTicks === "number" ? parsed.startTicks : null,
      startedAt: typeof parsed.startedAt === "string" ? parsed.startedAt : "",
    };
  } catch {
    return undefined;
  }
}

/** Alive, and the same process: a PID reused by another process (a container restarted as pid 1) is not. */
function isRunning(holder: Holder): boolean {
  if (holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (e) {
    // EPERM: the process exists but belongs to another user.
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const ticks = startTicksOf(holder.pid);
  return holder.startTicks === null || ticks === null || ticks === holder.startTicks;
}

/** Field 22 of /proc/<pid>/stat (after the parenthesised command name, which may hold spaces); null off Linux. */
function startTicksOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[19]);
    return Number.isFinite(ticks) ? ticks : null;
  } catch {
    return null;
  }
}
