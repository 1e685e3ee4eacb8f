import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import pg from "pg";
import { inject } from "vitest";
import { quoteIdent } from "../../src/storage/database.js";
import { ADMIN_TOKEN } from "./app.js";

const SERVER = resolve(import.meta.dirname, "../../src/server.ts");
const START_TIMEOUT_MS = 30_000;

/** A database of its own on the run's PostgreSQL server, for a Roster process; dropped by `drop`. */
export interface ServerDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

export async function createServerDatabase(): Promise<ServerDatabase> {
  const serverUrl = inject("databaseUrl");
  const name = `roster_proc_${randomBytes(5).toString("hex")}`;
  const run = async (statement: string) => {
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    try {
      await admin.query(statement);
    } finally {
      await admin.end();
    }
  };
  await run(`create database ${quoteIdent(name)}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => run(`drop database if exists ${quoteIdent(name)} with (force)`),
  };
}

/** `node --import tsx src/server.ts` as a child process: Roster as it runs in production. */
export interface RosterProcess {
  readonly pid: number;
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** SIGKILL: no shutdown hook runs, nothing is flushed. Resolves once the process is gone. */
  kill9(): Promise<void>;
  /** SIGTERM and wait: the graceful shutdown. */
  stop(): Promise<void>;
  /** Its last lines of output, for failure messages. */
  tail(): string;
}

export const PROCESS_SECRETS = "roster-process-test-secret-0123456789abcdef";

/** Starts Roster on `databaseUrl` (port 0) and resolves once it announced its URL and /health/ready answers 200. */
export async function startRosterProcess(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<RosterProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", SERVER], {
    env: {
      PATH: process.env.PATH ?? "",
      ROSTER_DATABASE_URL: databaseUrl,
      ROSTER_SECRETS: PROCESS_SECRETS,
      ROSTER_ADMIN_TOKEN: ADMIN_TOKEN,
      ROSTER_HOST: "127.0.0.1",
      ROSTER_PORT: "0",
      ROSTER_LOG_LEVEL: "warn",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error("Roster did not start");
  const lines: string[] = [];
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const url = await new Promise<string>((announced, failed) => {
    const timer = setTimeout(
      () => failed(new Error(`Roster did not start in time:\n${lines.join("\n")}`)),
      START_TIMEOUT_MS,
    );
    const onLine = (line: string) => {
      lines.push(line);
      if (lines.length > 50) lines.shift();
      const found = /Roster is running at (http:\/\/\S+)/.exec(line)?.[1];
      if (found !== undefined) {
        clearTimeout(timer);
        announced(found);
      }
    };
    if (child.stdout !== null) createInterface({ input: child.stdout }).on("line", onLine);
    if (child.stderr !== null) createInterface({ input: child.stderr }).on("line", onLine);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      failed(new Error(`Roster exited (${signal ?? code}) before it was ready:\n${lines.join("\n")}`));
    });
  });
  return {
    pid,
    url,
    kill9: () => signal(child, "SIGKILL", exited),
    stop: () => signal(child, "SIGTERM", exited),
    tail: () => lines.join("\n"),
  };
}

async function signal(child: ChildProcess, name: NodeJS.Signals, exited: Promise<void>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill(name);
  await exited;
}

/** A JSON call to a Roster process; answers the status and the parsed body. */
export async function call(
  url: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>) };
}
