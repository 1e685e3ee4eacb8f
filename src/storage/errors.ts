import type { DatabaseFaults } from "../platform/faults.js";

/** SQLSTATE → meaning, at the repository boundary (never by message text). */
interface PgError {
  code?: unknown;
  syscall?: unknown;
  constraint?: unknown;
}

const asPg = (e: unknown): PgError => (typeof e === "object" && e !== null ? (e as PgError) : {});

export const isUniqueViolation = (e: unknown, constraint?: string): boolean =>
  asPg(e).code === "23505" && (constraint === undefined || asPg(e).constraint === constraint);

export const isForeignKeyViolation = (e: unknown, constraint?: string): boolean =>
  asPg(e).code === "23503" && (constraint === undefined || asPg(e).constraint === constraint);

export const isCheckViolation = (e: unknown, constraint?: string): boolean =>
  asPg(e).code === "23514" && (constraint === undefined || asPg(e).constraint === constraint);

/** 40001 serialization_failure and 40P01 deadlock_detected: safe to retry the whole transaction. */
export const isRetryableTransactionError = (e: unknown): boolean =>
  asPg(e).code === "40001" || asPg(e).code === "40P01";

export const constraintOf = (e: unknown): string | undefined => {
  const c = asPg(e).constraint;
  return typeof c === "string" ? c : undefined;
};

/**
 * SQLSTATEs that mean "the database cannot serve this now", not "this request is wrong": class 08 (connection
 * exception), 57P01–57P03 (the server is shutting down, crashed, or not accepting connections yet), 53300 (no
 * connection slot left), 57014 (a statement cancelled, by `statement_timeout` among others), 25P03 (a
 * transaction left idle too long was ended) and 25006 (a write, or a locking read, reached a server that is read
 * only: during a failover a pooler's server connection can still point at the demoted primary or at a standby not
 * yet promoted; Roster never opens read-only transactions itself, so the request is not wrong — it is early).
 */
const UNAVAILABLE_SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300", "57014", "25P03", "25006"]);

/** Node's socket errors on the way to the server. */
const UNAVAILABLE_NODE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * pg's own errors for a lost or never-made connection carry no code, only these fixed messages (pg and pg-pool
 * source); matched here, in one place, so nothing else reads message text.
 */
const UNAVAILABLE_DRIVER_MESSAGES = [
  "Connection terminated",
  "timeout exceeded when trying to connect",
  "Query read timeout",
  "is not queryable",
  "Cannot use a pool after calling end on the pool",
];

/** The `Retry-After` of a 503 answered because the database is unavailable: reconnecting takes about this long. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/**
 * The database is unreachable, restarting, or did not answer in time: the request may succeed when retried, and the
 * protocol answer is 503. Follows `cause` and AggregateError (a host name that resolves to several addresses).
 */
export function isDatabaseUnavailable(e: unknown, depth = 0): boolean {
  if (typeof e !== "object" || e === null || depth > 4) return false;
  const code = asPg(e).code;
  if (typeof code === "string") {
    if (
      (code.length === 5 && code.startsWith("08")) ||
      UNAVAILABLE_SQLSTATES.has(code) ||
      UNAVAILABLE_NODE_CODES.has(code)
    )
      return true;
    // A Unix socket that is not there: the embedded server is down or restarting.
    if (code === "ENOENT" && asPg(e).syscall === "connect") return true;
  }
  if (e instanceof Error) {
    if (code === undefined && UNAVAILABLE_DRIVER_MESSAGES.some((m) => e.message.includes(m))) return true;
    if (e instanceof AggregateError && e.errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))) return true;
    if (e.cause !== undefined) return isDatabaseUnavailable(e.cause, depth + 1);
  }
  return false;
}

/**
 * Errors a request's values alone can cause, whatever the code before it missed: class 22 (data exception —
 * 22P05 untranslatable character, 22021 bad encoding, 22001 string too long, 22003 numeric out of range, 22P02 bad
 * text representation…) and class 54 (program limits — 54000 an index row too large, 54001 nesting too deep).
 * They answer 4xx, never 500: retrying cannot help and the server is fine. The SQLSTATE, never the message (which
 * can quote the value), is what the client learns.
 */
export const clientDataErrorCode = (e: unknown): string | undefined => {
  const code = asPg(e).code;
  if (typeof code !== "string" || !/^[0-9A-Z]{5}$/.test(code)) return undefined;
  return code.startsWith("22") || code.startsWith("54") ? code : undefined;
};

/** The database's faults as the protocols see them (platform/faults.ts). */
export const DATABASE_FAULTS: DatabaseFaults = {
  isUnavailable: (e) => isDatabaseUnavailable(e),
  clientDataCode: clientDataErrorCode,
  retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS,
};
