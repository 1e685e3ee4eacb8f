/** SQLSTATE → meaning, at the repository boundary (never by message text). */
interface PgError {
  code?: unknown;
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
