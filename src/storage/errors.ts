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
