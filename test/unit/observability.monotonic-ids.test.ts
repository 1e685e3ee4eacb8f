import { describe, expect, it } from "vitest";
import { monotonicUuidv7Source } from "../../src/observability/ids.js";

const msOf = (id: string): number => Number.parseInt(id.replaceAll("-", "").slice(0, 12), 16);
const DAY_MS = 86_400_000;
const NOW = Date.parse("2026-03-01T12:00:00Z");

describe("monotonic UUIDv7 sources", () => {
  it("orders one source's ids as they were made, also when its clock stands still or steps back", () => {
    const ids = monotonicUuidv7Source();
    const made = [ids(NOW), ids(NOW), ids(NOW), ids(NOW - 5_000), ids(NOW + 1)];
    expect([...made].sort()).toEqual(made);
    expect(new Set(made).size).toBe(made.length);
    expect(made.map(msOf)).toEqual([NOW, NOW, NOW, NOW, NOW + 1]);
  });

  it("keeps each source to its own clock: another source's ids days ahead do not move this one's", () => {
    const ahead = monotonicUuidv7Source();
    const own = monotonicUuidv7Source();
    ahead(NOW + 400 * DAY_MS);
    expect(msOf(own(NOW))).toBe(NOW);
  });
});
