import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { type StartedChild, startChild } from "../lib/child.js";
import type { Cleanup } from "../lib/cleanup.js";
import { jsonOf, send } from "../lib/http.js";
import { ROOT } from "../lib/roster.js";
import type { ScimTarget } from "../lib/scim.js";
import { openPool } from "../lib/http.js";

/** The Polis release the comparison runs: `@boxyhq/saml-jackson` on npm (Ory Polis's engine). */
export const POLIS_VERSION = "26.2.0";

/**
 * Installs Polis from npm into a scratch folder under `node_modules/.cache` — outside Roster's own dependencies,
 * reused by later runs, removed with `node_modules`.
 */
export async function installPolis(log: (line: string) => void): Promise<string> {
  const dir = join(ROOT, "node_modules", ".cache", "roster-peers", `polis-${POLIS_VERSION}`);
  const installed = join(dir, "node_modules", "@boxyhq", "saml-jackson", "package.json");
  if (existsSync(installed)) {
    const { version } = JSON.parse(await readFile(installed, "utf8")) as { version?: string };
    if (version === POLIS_VERSION) return dir;
  }
  log(`installing @boxyhq/saml-jackson@${POLIS_VERSION} into ${dir} (once; about 2 minutes)`);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "package.json"), `${JSON.stringify({ name: "roster-peer-polis", private: true })}\n`);
  await run("npm", [
    "install",
    "--prefix",
    dir,
    "--no-audit",
    "--no-fund",
    "--loglevel=error",
    `@boxyhq/saml-jackson@${POLIS_VERSION}`,
    "pg@8",
  ]);
  return dir;
}

/** A database beside `url`'s on the same server, for Polis: the two engines share one PostgreSQL. */
export async function siblingDatabase(url: string, name: string, cleanup: Cleanup): Promise<string> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  cleanup.add(`database ${name}`, async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`drop database if exists ${name} with (force)`).finally(() => c.end());
  });
  const sibling = new URL(url);
  sibling.pathname = `/${name}`;
  return sibling.toString();
}

export async function startPolis(dir: string, databaseUrl: string): Promise<StartedChild> {
  return startChild({
    name: "Polis",
    script: "bench/peers/polis-server.ts",
    cwd: ROOT,
    env: { ...process.env, POLIS_DIR: dir, POLIS_DATABASE_URL: databaseUrl, NODE_ENV: "production" },
    urlFrom: (line) => /polis listening on (http:\/\/\S+)/.exec(line)?.[1],
    startTimeoutMs: 120_000,
  });
}

/** Creates a SCIM directory (Polis's connection) and returns it as a target for the bench's requests. */
export async function createPolisDirectory(origin: string): Promise<ScimTarget> {
  const pool = openPool(origin, 1);
  try {
    const reply = await send(pool, { origin, headers: {} }, { method: "POST", path: "/bench/directories" });
    const body = jsonOf(reply);
    if (reply.status !== 201 || typeof body.base !== "string" || typeof body.secret !== "string") {
      throw new Error(`creating a Polis directory failed: ${reply.status} ${reply.text.slice(0, 200)}`);
    }
    return {
      origin,
      clientId: String(body.id),
      base: body.base,
      headers: { authorization: `Bearer ${body.secret}`, "content-type": "application/scim+json" },
    };
  } finally {
    await pool.close();
  }
}

function run(command: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "inherit", "inherit"] });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${args.join(" ")} exited with ${code}`)),
    );
  });
}
