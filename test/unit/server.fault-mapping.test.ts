import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { faultOf } from "../../src/platform/faults.js";
import { DATABASE_FAULTS } from "../../src/storage/errors.js";

const coded = (code: string, message = `error ${code}`) => Object.assign(new Error(message), { code });

/** A logger whose lines are kept as parsed objects. */
function capturing() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

/** pino's numeric levels. */
const LEVEL: Record<string, number> = { warn: 40, error: 50 };

const context = { label: "SCIM request", method: "POST", path: "/scim/c/v2/Users" };

/** The one fault mapping shared by SCIM, the admin API and the edge: what each fault answers, and its log line. */
describe("faultOf", () => {
  it.each([
    ["a terminated backend (57P01)", coded("57P01"), 503, "warn", "SCIM request: database unavailable"],
    ["a refused connection", coded("ECONNREFUSED"), 503, "warn", "SCIM request: database unavailable"],
    ["a statement timeout (57014)", coded("57014"), 503, "warn", "SCIM request: database unavailable"],
    ["an untranslatable character (22P05)", coded("22P05"), 400, "warn", "SCIM request refused by the database"],
    ["an index row too large (54000)", coded("54000"), 400, "warn", "SCIM request refused by the database"],
    ["a unique violation no repository translated", coded("23505"), 500, "error", "SCIM request failed"],
    ["a programming error", new TypeError("x is undefined"), 500, "error", "SCIM request failed"],
  ])("%s answers %i", (_name, error, status, level, message) => {
    const { logger, lines } = capturing();
    const fault = faultOf(error, DATABASE_FAULTS, logger, context);
    expect(fault.status).toBe(status);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: LEVEL[level], msg: message, method: "POST" });
  });

  it("503 says retry later, after the database's reconnect time", () => {
    const { logger } = capturing();
    expect(faultOf(coded("57P01"), DATABASE_FAULTS, logger, context)).toEqual({
      status: 503,
      message: "the service is temporarily unavailable; retry later",
      retryAfterSeconds: DATABASE_FAULTS.retryAfterSeconds,
    });
  });

  it("400 names the SQLSTATE, never the database's message (which can quote the value)", () => {
    const { logger, lines } = capturing();
    const fault = faultOf(coded("22P05", 'invalid byte sequence: "s3cret"'), DATABASE_FAULTS, logger, context);
    expect(fault).toEqual({
      status: 400,
      message: "a value in the request cannot be stored (SQLSTATE 22P05)",
      sqlState: "22P05",
    });
    expect(JSON.stringify(lines)).not.toContain("s3cret");
  });

  it("500 carries a fresh error id that its log line carries too, and nothing of the error", () => {
    const { logger, lines } = capturing();
    const fault = faultOf(new Error("boom s3cret"), DATABASE_FAULTS, logger, context);
    if (fault.status !== 500) throw new Error(`expected 500, got ${fault.status}`);
    expect(fault.errorId).toMatch(/^[0-9a-f]{16}$/);
    expect(lines[0]).toMatchObject({ errorId: fault.errorId, path: "/scim/c/v2/Users" });
    expect(JSON.stringify(fault)).not.toContain("s3cret");
  });
});
