import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ADMIN_TOKEN } from "../helpers/constants.js";
import { call, spawnRoster } from "../helpers/roster-process.js";

// Roster on the embedded default, started as `npm start` runs it (tsx) and as a terminal starts a foreground job (its
// own process group), stopped as Ctrl-C stops it: the signal reaches Roster and its embedded PostgreSQL in the same
// instant. What it prints from the signal on is one info line: no warning, no error, no stack trace.

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "roster-shutdown-"));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

interface LogLine {
  readonly level: number;
  readonly msg: string;
}

async function stopWith(signal: "SIGINT" | "SIGTERM"): Promise<{ status: number | string; after: string[] }> {
  const roster = await spawnRoster(
    { ROSTER_DATA_DIR: dataDir, ROSTER_LOG_FORMAT: "json", ROSTER_LOG_LEVEL: "info" },
    90_000,
    { processGroup: true, tsx: true },
  );
  try {
    // Busy pools and a registered webhook dispatcher: what a real Ctrl-C interrupts.
    const org = await call(roster.url, "POST", "/v2alpha1/admin/organizations", ADMIN_TOKEN, { name: "Acme" });
    expect(org.status).toBe(201);
    await Promise.all(
      Array.from({ length: 8 }, () => call(roster.url, "GET", "/v2alpha1/admin/organizations", ADMIN_TOKEN)),
    );
    // The create's "admin change" line is written after its answer: the signal comes once it is out, so that what
    // follows the signal is the shutdown's own output.
    await vi.waitFor(() => expect(roster.output.some((l) => l.includes('"admin change"'))).toBe(true), {
      timeout: 10_000,
    });
    const before = roster.output.length;
    process.kill(-roster.pid, signal);
    const status = await roster.exited;
    return { status, after: roster.output.slice(before) };
  } finally {
    await roster.stop();
  }
}

describe.each(["SIGINT", "SIGTERM"] as const)("%s to the process group (embedded PostgreSQL)", (signal) => {
  it("prints one info line, exits 0, and nothing at WARN or above, no stack", async () => {
    const { status, after } = await stopWith(signal);
    const context = after.join("\n");
    expect(status, context).toBe(0);
    expect(context).not.toMatch(/\n?\s+at .+:\d+:\d+/);
    expect(context).not.toMatch(/EPIPE|stack/);
    const lines = after.filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as LogLine);
    expect(
      lines.filter((l) => l.level >= 40),
      context,
    ).toEqual([]);
    const info = lines.filter((l) => l.level === 30);
    expect(info.map((l) => l.msg)).toEqual(["shutting down: no new requests, finishing in-flight ones"]);
  }, 120_000);
});
