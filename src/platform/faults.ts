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
