import { randomBytes } from "node:crypto";
import type { Logger } from "./logger.js";

/** What a log line keeps of an unexpected error: its kind and message on one line; the stack only at debug. */
interface Context {
  readonly method: string;
  /** The request path without its query string (a filter can carry personal data). */
  readonly path: string;
}

/**
 * Logs an unexpected error as one line that carries a fresh error id, and returns the id for the response: an
 * operator finds the line from what the client reports, and the client learns nothing about the internals.
 */
export function logInternalError(logger: Logger, error: unknown, context: Context, message: string): string {
  const errorId = randomBytes(8).toString("hex");
  const e = error instanceof Error ? error : new Error(String(error));
  const code = (error as { code?: unknown } | null)?.code;
  logger.error(
    {
      errorId,
      method: context.method,
      path: context.path,
      error: { type: e.name, message: e.message, ...(typeof code === "string" ? { code } : {}) },
    },
    message,
  );
  if (logger.isLevelEnabled("debug")) logger.debug({ errorId, stack: e.stack }, `${message}: stack`);
  return errorId;
}

export const pathOnly = (url: string): string => url.split("?")[0] ?? "";
