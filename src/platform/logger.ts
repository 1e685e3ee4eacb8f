import { pino, type Logger, type LevelWithSilent } from "pino";

export type { Logger };

/** Paths pino censors wherever they appear in a log object: secrets never reach a log line. */
export const REDACT_PATHS = [
  "req.headers.authorization",
  "headers.authorization",
  "*.password",
  "*.secret",
  "*.raw_key",
  "*.webhook_secret",
  "password",
  "secret",
];

export const createLogger = (level: LevelWithSilent): Logger =>
  pino({ level, redact: { paths: REDACT_PATHS, censor: "[redacted]" } });
