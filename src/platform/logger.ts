import { type DestinationStream, type LevelWithSilent, type Logger, pino } from "pino";
import pretty from "pino-pretty";

export type { Logger };

/** Paths pino censors wherever they appear in a log object: secrets never reach a log line. */
export const REDACT_PATHS = [
  "req.headers.authorization",
  "req.headers.cookie",
  'req.headers["proxy-authorization"]',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  "headers.authorization",
  "headers.cookie",
  'headers["set-cookie"]',
  'headers["proxy-authorization"]',
  'headers["x-api-key"]',
  "*.authorization",
  "*.cookie",
  '*["set-cookie"]',
  '*["x-api-key"]',
  "*.password",
  "*.secret",
  "*.raw_key",
  "*.webhook_secret",
  "*.token",
  "*.key",
  "password",
  "secret",
  "token",
  "key",
];

/** `pretty`: readable lines; `json`: one JSON object a line; `auto`: pretty on a terminal, JSON otherwise. */
export type LogFormat = "auto" | "pretty" | "json";

export interface LoggerOptions {
  readonly format?: LogFormat;
  /** Default: standard output. */
  readonly destination?: DestinationStream;
}

export function createLogger(level: LevelWithSilent, options: LoggerOptions = {}): Logger {
  const settings = { level, redact: { paths: REDACT_PATHS, censor: "[redacted]" } };
  const format = options.format ?? "json";
  const usePretty = format === "pretty" || (format === "auto" && process.stdout.isTTY === true);
  if (!usePretty) return options.destination === undefined ? pino(settings) : pino(settings, options.destination);
  // In-process (no worker thread): a terminal is for a person watching, not for throughput.
  const stream = pretty({
    colorize: options.destination === undefined && process.stdout.isTTY === true,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "pid,hostname",
    singleLine: true,
    ...(options.destination === undefined ? {} : { destination: options.destination }),
  });
  return pino(settings, stream);
}
