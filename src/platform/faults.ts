import { logInternalError } from "./internal-error.js";
import type { Logger } from "./logger.js";

/**
 * How a protocol tells the database's faults apart from its own errors, without knowing the database: storage
 * implements it (storage/errors.ts) and the composition root hands it to each protocol.
 */
export interface DatabaseFaults {
  /** Unreachable, restarting or too slow: the request may succeed when retried (answered 503 with Retry-After). */
  isUnavailable(e: unknown): boolean;
  /** The SQLSTATE of a value the database refused (an encoding, a size): the request's fault (answered 400). */
  clientDataCode(e: unknown): string | undefined;
  /** The `Retry-After` of a 503: reconnecting takes about this long. */
  readonly retryAfterSeconds: number;
}

/**
 * What a failure that is neither a protocol error nor a domain error means, the same for SCIM, the admin API and
 * the edge; each renders it in its own error format.
 * - 503: the database is unavailable; the request may succeed when retried after `retryAfterSeconds`.
 * - 400: a value the database refused (an encoding, a size); retrying cannot help. The SQLSTATE, never the
 *   database's message (which can quote the value), is what the client learns.
 * - 500: anything else, logged with a fresh error id that the answer carries (never the error's own text).
 */
export type Fault =
  | { readonly status: 503; readonly message: string; readonly retryAfterSeconds: number }
  | { readonly status: 400; readonly message: string; readonly sqlState: string }
  | { readonly status: 500; readonly errorId: string };

/** The request a fault happened in, as the log line names it (`label`: "SCIM request", "admin request"…). */
export interface FaultContext {
  readonly label: string;
  readonly method: string;
  /** The path without its query string. */
  readonly path: string;
}

export const UNAVAILABLE_MESSAGE = "the service is temporarily unavailable; retry later";

/** The one fault mapping: classifies `error` and logs it (a warning for 503 and 400, an error line for 500). */
export function faultOf(error: unknown, faults: DatabaseFaults, logger: Logger, context: FaultContext): Fault {
  if (faults.isUnavailable(error)) {
    const code = (error as { code?: unknown } | null)?.code;
    logger.warn({ code, method: context.method }, `${context.label}: database unavailable`);
    return { status: 503, message: UNAVAILABLE_MESSAGE, retryAfterSeconds: faults.retryAfterSeconds };
  }
  const sqlState = faults.clientDataCode(error);
  if (sqlState !== undefined) {
    logger.warn({ sqlState, method: context.method, path: context.path }, `${context.label} refused by the database`);
    return { status: 400, message: `a value in the request cannot be stored (SQLSTATE ${sqlState})`, sqlState };
  }
  const errorId = logInternalError(logger, error, context, `${context.label} failed`);
  return { status: 500, errorId };
}
