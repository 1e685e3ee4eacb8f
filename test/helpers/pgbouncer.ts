import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

export const PGBOUNCER = "/usr/sbin/pgbouncer";
export const hasPgBouncer = existsSync(PGBOUNCER);

export interface PgBouncer {
  /** A postgres:// URL of `database` through the pooler. */
  url(database: string): string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/**
 * PgBouncer in transaction pooling mode in front of the server of `serverUrl`, every database name passed through,
 * with few server connections so that consecutive transactions of one client land on different ones.
 */
export async function startPgBouncer(serverUrl: string, serverConnections = 2): Promise<PgBouncer> {
  const target = new URL(serverUrl);
  // The embedded cluster is reached over its Unix socket directory (?host=); a server over TCP.
  const host = target.searchParams.get("host") ?? target.hostname;
  const port = target.port === "" ? "5432" : target.port;
  const user = decodeURIComponent(target.username) || "postgres";
  // auth_type = any lets every client in without a password; PgBouncer then logs in to the server as the connection
  // string below says, so a server that wants a password (the embedded cluster does) is given it here.
  const password = decodeURIComponent(target.password);
  const dir = await mkdtemp(join(tmpdir(), "roster-pgbouncer-"));
  await chmod(dir, 0o755);
  const listen = await freePort();
  const ini = [
    "[databases]",
    `* = host=${host} port=${port} user=${user}${password === "" ? "" : ` password=${password}`}`,
    "[pgbouncer]",
    "listen_addr = 127.0.0.1",
    `listen_port = ${listen}`,
    "unix_socket_dir =",
    "auth_type = any",
    "pool_mode = transaction",
    `default_pool_size = ${serverConnections}`,
    "max_client_conn = 200",
    "server_reset_query =",
    "ignore_startup_parameters = extra_float_digits",
    // As docs/scaling.md recommends: a server that refused a login is tried again after 1 s, not 15.
    "server_login_retry = 1",
  ].join("\n");
  const file = join(dir, "pgbouncer.ini");
  await writeFile(file, `${ini}\n`, { mode: 0o644 });
  // PgBouncer refuses to run as root; -u drops to an ordinary user.
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(PGBOUNCER, asRoot ? ["-u", "postgres", file] : [file], { stdio: "ignore" });
  const url = (database: string) => `postgres://${user}@127.0.0.1:${listen}/${database}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const probe = new pg.Client({ connectionString: url("postgres") });
    try {
      await probe.connect();
      await probe.query("select 1");
      await probe.end();
      break;
    } catch (e) {
      await probe.end().catch(() => {});
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`PgBouncer did not start: ${String(e)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    async stop() {
      child.kill("SIGTERM");
      await new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", () => resolve())));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
