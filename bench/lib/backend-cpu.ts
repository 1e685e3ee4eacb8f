import { readFileSync } from "node:fs";
import pg from "pg";
import { type CpuReader, processCpuMs } from "./cpu.js";

/** How often the list of a database's backends is refreshed; a backend that exits loses at most this much CPU. */
const POLL_MS = 200;

export interface BackendCpu {
  readonly read: CpuReader;
  readonly scope: string;
  close(): Promise<void>;
}

/**
 * The CPU of the PostgreSQL backends connected to one database (its autovacuum workers included), read from
 * `/proc/<pid>/stat` of the pids `pg_stat_activity` lists for it. On a server shared with other work this is the
 * only figure that belongs to the system measured; the server's own background processes (WAL writer,
 * checkpointer) are left out on both sides of a comparison. A backend keeps the last CPU figure read before it
 * exited, so its work stays counted. Undefined when the server's processes are not readable here (not local).
 */
export async function databaseBackendsCpu(url: string): Promise<BackendCpu | undefined> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const self = (await client.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]?.pid ?? 0;
  if (!readCmdline(self).includes("postgres")) {
    await client.end();
    return undefined;
  }
  const database = new URL(url).pathname.slice(1);
  /** pid → CPU ms last read from /proc, kept after the backend exits. */
  const seen = new Map<number, number>();
  const sample = (pid: number) => {
    const ms = processCpuMs(pid);
    if (!Number.isNaN(ms)) seen.set(pid, ms);
  };
  let closed = false;
  let polling: Promise<void> = Promise.resolve();
  const refresh = async () => {
    const { rows } = await client.query<{ pid: number }>(
      "select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()",
      [database],
    );
    for (const { pid } of rows) sample(pid);
  };
  await refresh();
  const timer = setInterval(() => {
    polling = polling.then(refresh).catch(() => undefined);
  }, POLL_MS);
  return {
    scope: `backends of database ${database}`,
    read: () => {
      let total = 0;
      for (const pid of seen.keys()) {
        sample(pid);
        total += seen.get(pid) ?? 0;
      }
      return total;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      await polling;
      await client.end();
    },
  };
}

function readCmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}
