import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { rosterUrlFrom, type StartedChild, startChild } from "./child.js";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const ADMIN_TOKEN = "bench-admin-token-0123456789abcdef";
export const SECRETS = "bench-cursor-and-box-key-0123456789abcdef0123456789";
/** The node flags `npm start` gives Roster: those of package.json's start script before `--import tsx`. */
export const START_FLAGS: readonly string[] = (() => {
  const start = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: { start: string } }).scripts
    .start;
  const words = start.split(/\s+/);
  return words.slice(words.indexOf("node") + 1, words.indexOf("--import"));
})();

/**
 * Starts Roster as a child process exactly as `npm start` does (port 0, log level `warn`, fixed admin token and
 * ROSTER_SECRETS), with none of this process's ROSTER_* variables.
 */
export function startRoster(databaseUrl: string, dataDir: string): Promise<StartedChild> {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith("ROSTER_")) env[key] = value;
  return startChild({
    name: "Roster",
    script: "src/server.ts",
    // Profiling: BENCH_ROSTER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" (NODE_OPTIONS refuses --cpu-prof).
    nodeArgs: [...START_FLAGS, ...(process.env.BENCH_ROSTER_NODE_ARGS ?? "").split(/\s+/).filter((a) => a !== "")],
    cwd: ROOT,
    env: {
      ...env,
      ROSTER_HOST: "127.0.0.1",
      ROSTER_PORT: "0",
      ROSTER_DATABASE_URL: databaseUrl,
      ...(process.env.BENCH_POOLING === "transaction" ? { ROSTER_DATABASE_POOLING: "transaction" } : {}),
      ROSTER_DATA_DIR: dataDir,
      ROSTER_ADMIN_TOKEN: ADMIN_TOKEN,
      ROSTER_SECRETS: SECRETS,
      ROSTER_LOG_LEVEL: "warn",
      // The bench's webhook receiver listens on loopback, which Roster refuses unless listed.
      ROSTER_WEBHOOK_URL_ALLOW: "127.0.0.1",
      // Empty = unset for Roster, and keeps a .env file from setting it: the welcome line then names the real port.
      ROSTER_PUBLIC_URL: "",
    },
    urlFrom: rosterUrlFrom,
    startTimeoutMs: 120_000,
  });
}
