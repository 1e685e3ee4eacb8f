import { Writable } from "node:stream";
import type { LevelWithSilent } from "pino";
import { createLogger, type Logger, type LogFormat } from "../../src/platform/logger.js";

/** A logger made as the app makes its own (createLogger: the same redaction), and what it wrote. */
export interface CapturedLog {
  readonly logger: Logger;
  /** One entry per write: a whole line in the JSON format. Empty it (`lines.length = 0`) to start afresh. */
  readonly lines: string[];
  /** Everything written so far, as one text. */
  text(): string;
}

export function captureLog(level: LevelWithSilent, format: LogFormat = "json"): CapturedLog {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString("utf8"));
      done();
    },
  });
  return { logger: createLogger(level, { format, destination }), lines, text: () => lines.join("") };
}
