import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/platform/logger.js";
import { DataDirInUseError, LOCK_FILE, lockDataDir } from "../../src/storage/data-dir-lock.js";

const logger = createLogger("silent");
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "roster-lock-test-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const holder = (pid: number, startTicks: number | null) =>
  writeFile(join(dir, LOCK_FILE), `${JSON.stringify({ pid, startTicks, startedAt: "2026-01-01T00:00:00.000Z" })}\n`);
const lockedPid = () => (JSON.parse(readFileSync(join(dir, LOCK_FILE), "utf8")) as { pid: number }).pid;

/** The PID of a process that has exited. */
const deadPid = (): number => {
  const run = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(run.stdout);
};

function startTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
  } catch {
    return null;
  }
}

describe("the data directory lock", () => {
  it("is taken in a free directory and released on demand", () => {
    const lock = lockDataDir(dir, logger);
    expect(lockedPid()).toBe(process.pid);
    lock.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it("refuses a directory whose owner lives, naming it", async () => {
    await holder(process.ppid, startTicks(process.ppid));
    expect(() => lockDataDir(dir, logger)).toThrow(DataDirInUseError);
    expect(() => lockDataDir(dir, logger)).toThrow(`another Roster (pid ${process.ppid}) is using ${dir}`);
    expect(lockedPid()).toBe(process.ppid);
  });

  it("takes over the lock of a process that is gone", async () => {
    await holder(deadPid(), null);
    lockDataDir(dir, logger).release();
  });

  it.skipIf(startTicks(process.pid) === null)(
    "takes over a lock whose PID now belongs to another process",
    async () => {
      const ticks = startTicks(process.ppid) ?? 0;
      await holder(process.ppid, ticks + 1);
      const lock = lockDataDir(dir, logger);
      expect(lockedPid()).toBe(process.pid);
      lock.release();
    },
  );

  it("takes over an unreadable lock file and leaves another owner's file alone on release", async () => {
    await writeFile(join(dir, LOCK_FILE), "not json");
    const lock = lockDataDir(dir, logger);
    await holder(process.ppid, null);
    lock.release();
    expect(lockedPid()).toBe(process.ppid);
  });
});
