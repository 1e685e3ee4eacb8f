import { describe, expect, it } from "vitest";
import { isoFromUtcText } from "../../src/directory/identities/repo-columns.js";

/** PostgreSQL's timestamp text (DateStyle ISO, UTC) → what Date#toISOString writes for the instant pg's parser reads. */
describe("isoFromUtcText", () => {
  it.each([
    ["2026-11-21 22:25:53.123456", "2026-11-21T22:25:53.123Z"],
    ["2026-11-21 22:25:53.999999", "2026-11-21T22:25:53.999Z"],
    ["2026-11-21 22:25:53.1", "2026-11-21T22:25:53.100Z"],
    ["2026-11-21 22:25:53.04", "2026-11-21T22:25:53.040Z"],
    ["2026-11-21 22:25:53", "2026-11-21T22:25:53.000Z"],
    ["0999-01-01 00:00:00.5", "0999-01-01T00:00:00.500Z"],
  ])("%s → %s", (text, iso) => {
    expect(isoFromUtcText(text)).toBe(iso);
    // The object path's Date (pg parses microseconds and keeps milliseconds) writes the same text.
    expect(new Date(`${text.replace(" ", "T")}Z`).toISOString()).toBe(iso);
  });

  it.each([
    "2026-11-21T22:25:53.123Z",
    "2026-11-21 22:25:53+00",
    "Sat Nov 21 22:25:53.123 2026",
    "21.11.2026 22:25:53",
    "",
  ])("refuses %j (not DateStyle ISO in UTC)", (text) => {
    expect(() => isoFromUtcText(text)).toThrow(/unexpected timestamp text/);
  });
});
