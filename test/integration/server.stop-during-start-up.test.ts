import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { spawnRoster, startRoster } from "../helpers/roster-process.js";

// A stop signal while the embedded PostgreSQL is being created, started or migrated. SIGTERM sent to Roster alone (a
// supervisor stopping it): Roster finishes that step, stops the PostgreSQL it started and exits 0, leaving no
// postmaster behind for the next start to find. Ctrl-C (SIGINT to the terminal's process group, the PostgreSQL
// included): the same end, with one info line and no error.

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "roster-stop-start-"));
});
afterEach(async () => {
  const orphan = postmaster();
  if (orphan !== undefined) process.kill(orphan, "SIGKILL");
  await rm(dataDir, { recursive: true, force: true });
});

/** The embedded cluster's postmaster, when its pid file names a live process. */
function postmaster(): number | undefined {
  const file = join(dataDir, "pg", "postmaster.pid");
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, "utf8").split("\n")[0]);
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

async function stopWhen(
  line: string,
  signal: "SIGTERM" | "SIGINT" = "SIGTERM",
): Promise<{ status: number | string; output: string[] }> {
  const group = signal === "SIGINT";
  const roster = startRoster({ ROSTER_DATA_DIR: dataDir, ROSTER_LOG_FORMAT: "json" }, { processGroup: group });
  let sent = false;
  roster.onLine = (l) => {
    if (!sent && l.includes(`"msg":"${line}"`)) {
      sent = true;
      process.kill(group ? -roster.pid : roster.pid, signal);
    }
  };
  try {
    const status = await roster.exited;
    expect(sent, roster.tail()).toBe(true);
    return { status, output: roster.output };
  } finally {
    await roster.stop();
  }
}

describe("a stop signal before Roster is ready (embedded PostgreSQL)", () => {
  it.each(["starting Roster", "embedded PostgreSQL ready"])(
    "SIGTERM to Roster alone at “%s”: stops its PostgreSQL and exits 0",
    async (line) => {
      const { status, output } = await stopWhen(line);
      const context = output.join("\n");
      expect(status, context).toBe(0);
      expect(context).toContain("stopping: the signal came before start-up finished");
      expect(context).not.toContain("Roster is running at");
      expect(postmaster(), context).toBeUndefined();
    },
    120_000,
  );

  it("Ctrl-C to the process group while migrating: one info line, nothing at WARN or above, exit 0", async () => {
    const { status, output } = await stopWhen("embedded PostgreSQL ready", "SIGINT");
    const context = output.join("\n");
    expect(status, context).toBe(0);
    expect(context).not.toContain("failed to start");
    const lines = output.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(
      lines.filter((l) => l.level >= 40).map((l) => l.msg),
      context,
    ).toEqual([]);
    expect(lines.at(-1)?.msg, context).toBe("stopping: the signal came before start-up finished");
    expect(postmaster(), context).toBeUndefined();
  }, 120_000);

  it("the next start on the same data directory finds no orphan and serves", async () => {
    await stopWhen("embedded PostgreSQL ready");
    const roster = await spawnRoster({ ROSTER_DATA_DIR: dataDir, ROSTER_LOG_FORMAT: "json" }, 90_000);
    try {
      const res = await fetch(`${roster.url}/health/ready`);
      expect(res.status).toBe(200);
      expect(roster.output.join("\n")).not.toContain("orphaned embedded PostgreSQL");
    } finally {
      await roster.stop();
    }
  }, 180_000);
});
