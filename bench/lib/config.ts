/** Every operation the harness knows, in the order it runs them (reads before writes, so writes don't skew reads). */
export const OP_NAMES = [
  "get",
  "filter",
  "list_1",
  "list_4901",
  "cursor_first",
  "cursor_deep",
  "group_get",
  "patch",
  "put",
  "create",
  "group_create",
  "group_patch",
  "webhook",
] as const;

export type OpName = (typeof OP_NAMES)[number];

export interface BenchConfig {
  /** Users seeded through SCIM (env N). */
  readonly users: number;
  /** Groups seeded through SCIM (env M). */
  readonly groups: number;
  /** Measured seconds per operation (env DURATION). */
  readonly durationMs: number;
  /** Unmeasured seconds before each measurement, same load (env WARMUP). */
  readonly warmupMs: number;
  /** Closed-loop connections (env CONNECTIONS). */
  readonly connections: number;
  /** Requests in flight while seeding (env SEED_CONCURRENCY). */
  readonly seedConcurrency: number;
  readonly ops: readonly OpName[];
  /**
   * The measured client's SCIM request log mode (env REQUEST_LOG), set after seeding; `compare` measures the
   * operations with `errors` and with `all`, alternating for `rounds` rounds (env ROUNDS, default 3).
   */
  readonly requestLog: "errors" | "all" | "off" | "compare";
  readonly rounds: number;
  /** An existing PostgreSQL server; undefined = an embedded cluster in a temporary directory. */
  readonly databaseUrl: string | undefined;
}

export class BenchConfigError extends Error {}

export function loadBenchConfig(env: NodeJS.ProcessEnv): BenchConfig {
  const problems: string[] = [];
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === "") return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name}: "${raw}" must be an integer from ${min} to ${max}`);
      return fallback;
    }
    return value;
  };
  const seconds = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === "") return fallback * 1000;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max) {
      problems.push(`${name}: "${raw}" must be a number of seconds from ${min} to ${max}`);
      return fallback * 1000;
    }
    return Math.round(value * 1000);
  };

  const ops = parseOps(env.OPS, problems);
  const databaseUrl = env.ROSTER_DATABASE_URL;
  if (databaseUrl !== undefined && databaseUrl !== "" && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push("ROSTER_DATABASE_URL: must be a postgres:// URL (unset = an embedded cluster)");
  }
  const requestLog = env.REQUEST_LOG === undefined || env.REQUEST_LOG === "" ? "errors" : env.REQUEST_LOG;
  if (requestLog !== "errors" && requestLog !== "all" && requestLog !== "off" && requestLog !== "compare") {
    problems.push(`REQUEST_LOG: "${requestLog}" must be errors, all, off or compare`);
  }
  const config: BenchConfig = {
    users: int("N", 10_000, 1, 1_000_000),
    groups: int("M", 100, 1, 100_000),
    durationMs: seconds("DURATION", 10, 1, 600),
    warmupMs: seconds("WARMUP", 1, 0, 60),
    connections: int("CONNECTIONS", 16, 1, 1024),
    seedConcurrency: int("SEED_CONCURRENCY", 32, 1, 1024),
    ops,
    requestLog: requestLog === "all" || requestLog === "off" || requestLog === "compare" ? requestLog : "errors",
    rounds: int("ROUNDS", 3, 1, 50),
    databaseUrl: databaseUrl === undefined || databaseUrl === "" ? undefined : databaseUrl,
  };
  if (problems.length > 0) throw new BenchConfigError(problems.join("\n"));
  return config;
}

function parseOps(raw: string | undefined, problems: string[]): OpName[] {
  if (raw === undefined || raw.trim() === "" || raw.trim() === "all") return [...OP_NAMES];
  const wanted = raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const known = new Set<string>(OP_NAMES);
  for (const name of wanted) {
    if (!known.has(name)) problems.push(`OPS: unknown operation "${name}" (known: ${OP_NAMES.join(", ")})`);
  }
  return OP_NAMES.filter((name) => wanted.includes(name));
}
