import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { inject } from "vitest";
import { ADMIN_TOKEN, LOOPBACK_WEBHOOK_ALLOW, ROSTER_SECRETS } from "./constants.js";

/**
 * Roster's server as a child process on a real port: `src/server.ts` compiled to JavaScript once per run
 * (helpers/server-build.ts) and run with node, or, with `tsx` (or ROSTER_TEST_TSX=1 for every child),
 * `node --import tsx src/server.ts` as `npm start` runs it.
 */
export interface RosterProcess {
  readonly pid: number;
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far, line by line. */
  readonly output: string[];
  /** Its exit code (or signal name) once it has exited, else undefined. */
  exitStatus(): number | string | undefined;
  /** Resolves with the exit code (or signal name) when it exits. */
  readonly exited: Promise<number | string>;
  /** SIGTERM, then SIGKILL if it has not exited within 15 s. */
  stop(): Promise<void>;
  /** SIGKILL: no shutdown hook runs, nothing is flushed. Resolves once the process is gone. */
  kill9(): Promise<void>;
  /** Its last lines of output, for failure messages. */
  tail(): string;
}

const ROOT = join(import.meta.dirname, "../..");

/**
 * Spawns Roster with the given ROSTER_* variables (the test admin token and ROSTER_SECRETS unless given) and waits
 * until it announces its URL; rejects with its output if it exits first or takes longer than `timeoutMs`.
 */
export async function spawnRoster(
  env: Record<string, string>,
  timeoutMs = 60_000,
  options: SpawnOptions = {},
): Promise<RosterProcess> {
  const started = startRoster(env, options);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Roster did not start:\n${started.output.join("\n")}`)), timeoutMs);
    started.onLine = (line) => {
      const found = /Roster is running at (https?:\/\/\S+)/.exec(line)?.[1];
      if (found !== undefined) {
        clearTimeout(timer);
        resolve(found);
      }
    };
    void started.exited.then((status) => {
      clearTimeout(timer);
      reject(new Error(`Roster exited (${status}) before it was ready:\n${started.output.join("\n")}`));
    });
  }).catch(async (e: unknown) => {
    await started.stop();
    throw e;
  });
  return { ...started, url };
}

export interface SpawnOptions {
  /** `node --import tsx src/server.ts`, as `npm start` runs it, instead of the run's compiled server. */
  readonly tsx?: boolean;
  /**
   * Its own process group (pid = group id), as a terminal's foreground job is: `process.kill(-pid, "SIGINT")` is
   * then Ctrl-C, reaching Roster and the embedded PostgreSQL it started at once.
   */
  readonly processGroup?: boolean;
}

/** Spawns Roster and returns at once (for a start that is expected to fail). */
export function startRoster(
  env: Record<string, string>,
  options: SpawnOptions = {},
): Omit<RosterProcess, "url"> & {
  onLine: (line: string) => void;
} {
  const compiled = options.tsx === true ? "" : inject("serverEntry");
  const child = spawn(process.execPath, compiled === "" ? ["--import", "tsx", "src/server.ts"] : [compiled], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      ROSTER_PORT: "0",
      ROSTER_LOG_LEVEL: "info",
      ROSTER_ADMIN_TOKEN: ADMIN_TOKEN,
      ROSTER_SECRETS: ROSTER_SECRETS,
      // The tests' webhook receivers listen on loopback, which Roster refuses unless listed.
      ROSTER_WEBHOOK_URL_ALLOW: LOOPBACK_WEBHOOK_ALLOW.join(","),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: options.processGroup === true,
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error("Roster did not spawn");
  const output: string[] = [];
  let status: number | string | undefined;
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => {
      status = code ?? signal ?? "unknown";
      resolve(status);
    });
  });
  const handle = {
    pid,
    child,
    output,
    exited,
    exitStatus: () => status,
    onLine: (_line: string) => {},
    async stop() {
      if (status !== undefined) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    },
    async kill9() {
      if (status === undefined) child.kill("SIGKILL");
      await exited;
    },
    tail: () => output.slice(-50).join("\n"),
  };
  for (const stream of [child.stdout, child.stderr]) {
    if (stream === null) continue;
    createInterface({ input: stream }).on("line", (line) => {
      output.push(line);
      handle.onLine(line);
    });
  }
  return handle;
}

/** Polls `check` until it returns true or the deadline passes (cross-process: there is no event to wait for). */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check().catch(() => false)) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** GET /health/ready answers 200. */
export async function isReady(url: string): Promise<boolean> {
  const res = await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(5000) });
  await res.arrayBuffer();
  return res.status === 200;
}

export interface ChildClient {
  readonly clientId: string;
  readonly base: string;
  readonly headers: Record<string, string>;
}

/** An organization and a SCIM client, made through the child's admin API. */
export async function seedChildClient(url: string, webhook?: { url: string; secret: string }): Promise<ChildClient> {
  const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" };
  const org = await fetch(`${url}/v2alpha1/admin/organizations`, {
    method: "POST",
    headers,
    body: JSON.stringify({ name: "Acme" }),
  });
  if (org.status !== 201) throw new Error(`organization create failed: ${await org.text()}`);
  const { id } = (await org.json()) as { id: string };
  const secret = "child-scim-secret-0123456789abcdef";
  const created = await fetch(`${url}/v2alpha1/admin/scimClients`, {
    method: "POST",
    headers,
    body: JSON.stringify({ organization_id: id, secret, ...(webhook === undefined ? {} : { webhook }) }),
  });
  if (created.status !== 201) throw new Error(`client create failed: ${await created.text()}`);
  const { client_id: clientId } = (await created.json()) as { client_id: string };
  return {
    clientId,
    base: `${url}/scim/${clientId}/v2`,
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/scim+json" },
  };
}

/** Roster on `databaseUrl` (a database of its own, see createServerDatabase), on 127.0.0.1, logging warnings only. */
export function startRosterProcess(databaseUrl: string, env: Record<string, string> = {}): Promise<RosterProcess> {
  return spawnRoster(
    { ROSTER_DATABASE_URL: databaseUrl, ROSTER_HOST: "127.0.0.1", ROSTER_LOG_LEVEL: "warn", ...env },
    90_000,
  );
}

/** A JSON call to a Roster process (SCIM media type under /scim/); answers the status and the parsed body. */
export async function call(
  url: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const contentType = path.startsWith("/scim/") ? "application/scim+json" : "application/json";
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": contentType }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>) };
}
