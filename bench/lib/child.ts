import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

export interface StartedChild {
  readonly pid: number;
  /** The base URL the child announced. */
  readonly url: string;
  /** Its last lines of output, for error reports. */
  readonly tail: () => string[];
  /** Lines it logged at pino level error (50) or above. */
  readonly errorLines: () => string[];
  /** SIGTERM, then SIGKILL when it has not exited in time. */
  stop(): Promise<void>;
}

export interface ChildOptions {
  readonly name: string;
  /** Script run with `node --import tsx`. */
  readonly script: string;
  /** Extra node flags before `--import tsx` (e.g. `--cpu-prof`). */
  readonly nodeArgs?: readonly string[];
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** Extracts the base URL from a line of its stdout, if this line announces it. */
  readonly urlFrom: (line: string) => string | undefined;
  readonly startTimeoutMs: number;
}

const TAIL_LINES = 40;

/** Starts `node --import tsx <script>` and resolves once it announces its URL; rejects if it exits first. */
export async function startChild(options: ChildOptions): Promise<StartedChild> {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), "--import", "tsx", options.script], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${options.name} did not start`);
  const lines: string[] = [];
  const errors: string[] = [];
  let exited = false;
  let stopping = false;
  const exit = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.once("exit", (code, signal) => {
    exited = true;
    // An exit nobody asked for explains the socket errors that follow it.
    if (!stopping) {
      process.stderr.write(
        `bench: ${options.name} (pid ${pid}) exited unexpectedly (${signal ?? code}); its last lines:\n` +
          `${lines.join("\n")}\n`,
      );
    }
  });

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`${options.name} did not announce its URL within ${options.startTimeoutMs} ms`));
    }, options.startTimeoutMs);
    const onLine = (line: string) => {
      lines.push(line);
      if (lines.length > TAIL_LINES) lines.shift();
      if (isErrorLine(line) && errors.length < 100) errors.push(line);
      const found = options.urlFrom(line);
      if (found !== undefined) {
        clearTimeout(timer);
        resolve(found);
      }
    };
    if (child.stdout !== null) createInterface({ input: child.stdout }).on("line", onLine);
    if (child.stderr !== null) createInterface({ input: child.stderr }).on("line", onLine);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${options.name} exited (${signal ?? code}) before it was ready:\n${lines.join("\n")}`));
    });
  }).catch(async (e: unknown) => {
    stopping = true;
    await stopChild(child, exit, () => exited);
    throw e;
  });

  return {
    pid,
    url,
    tail: () => [...lines],
    errorLines: () => [...errors],
    stop: () => {
      stopping = true;
      return stopChild(child, exit, () => exited);
    },
  };
}

async function stopChild(child: ChildProcess, exit: Promise<void>, hasExited: () => boolean): Promise<void> {
  if (hasExited()) return;
  child.kill("SIGTERM");
  const timeout = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), 15_000).unref());
  if ((await Promise.race([exit.then(() => "exited" as const), timeout])) === "timeout") {
    child.kill("SIGKILL");
    await exit;
  }
}

function isErrorLine(line: string): boolean {
  const match = /"level":(\d+)/.exec(line);
  return match !== null && Number(match[1]) >= 50;
}

/** Roster prints `Roster is running at <url>` whatever the log level, and logs `url` on its "Roster ready" line. */
export function rosterUrlFrom(line: string): string | undefined {
  const welcome = /Roster is running at (http:\/\/\S+)/.exec(line);
  if (welcome?.[1] !== undefined) return welcome[1];
  if (!line.includes('"Roster ready"')) return undefined;
  const logged = /"url":"(http:\/\/[^"]+)"/.exec(line);
  return logged?.[1];
}

/** Waits until GET <url>/health/ready answers 200. */
export async function waitReady(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer";
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
      last = `HTTP ${res.status}`;
    } catch (e) {
      last = e instanceof Error ? e.message : String(e);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url}/health/ready not ready within ${timeoutMs} ms (${last})`);
}
