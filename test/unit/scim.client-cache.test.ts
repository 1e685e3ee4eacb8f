import { describe, expect, it } from "vitest";
import { cachedBytes, ScimClientCache } from "../../src/directory/scim-clients/cache.js";
import type { ScimClient } from "../../src/directory/scim-clients/types.js";
import { ManualClock } from "../../src/platform/clock.js";

const client = (id: string, org = "o1", extensionsBytes = 0) =>
  ({ clientId: id, organizationId: org, extensionsBytes, mapping: null }) as ScimClient;

/** A cache whose loader answers `load(id)` and counts its calls in `loads()`. */
function counting(load: (id: string) => ScimClient | undefined = (id) => client(id), clock = new ManualClock()) {
  let loads = 0;
  const cache = new ScimClientCache(async (id) => {
    loads++;
    return load(id);
  }, clock);
  return { cache, loads: () => loads };
}

describe("ScimClientCache", () => {
  it("loads once within the TTL and again after it", async () => {
    const clock = new ManualClock();
    const { cache, loads } = counting(undefined, clock);
    await cache.get("a");
    await cache.get("a");
    expect(loads()).toBe(1);
    clock.advance(5_001);
    await cache.get("a");
    expect(loads()).toBe(2);
  });

  it("peeks at a fresh entry only: nothing before the first load, nothing after the TTL, never a load", async () => {
    const clock = new ManualClock();
    const { cache, loads } = counting(undefined, clock);
    expect(cache.peek("a")).toBeUndefined();
    await cache.get("a");
    expect(cache.peek("a")).toMatchObject({ clientId: "a" });
    clock.advance(5_001);
    expect(cache.peek("a")).toBeUndefined();
    expect(loads()).toBe(1);
  });

  it("does not keep misses (a client created elsewhere is found at once), and forgets on demand", async () => {
    let exists = false;
    const { cache, loads } = counting((id) => (exists ? client(id) : undefined));
    expect(await cache.get("x")).toBeUndefined();
    exists = true;
    expect(await cache.get("x")).toMatchObject({ clientId: "x" });
    await cache.get("x");
    expect(loads()).toBe(2);
    cache.forget("x");
    await cache.get("x");
    expect(loads()).toBe(3);
  });

  it("refresh reads again even within the TTL", async () => {
    const { cache, loads } = counting();
    await cache.get("a");
    await cache.refresh("a");
    await cache.get("a");
    expect(loads()).toBe(2);
  });

  it("forgets every client of an organization", async () => {
    const { cache, loads } = counting((id) => client(id, id.startsWith("a") ? "oa" : "ob"));
    await Promise.all(["a1", "a2", "b1"].map((id) => cache.get(id)));
    cache.forgetOrganization("oa");
    await Promise.all(["a1", "a2", "b1"].map((id) => cache.get(id)));
    expect(loads()).toBe(5);
  });

  it("holds at most its byte budget, the least recently used clients leaving first", async () => {
    const loads: string[] = [];
    const large = (id: string) => client(id, "o1", 100_000);
    const budget = 3 * cachedBytes(large("x"));
    const cache = new ScimClientCache(
      async (id) => {
        loads.push(id);
        return id.startsWith("small") ? client(id) : large(id);
      },
      new ManualClock(),
      5_000,
      budget,
    );
    for (const id of ["l1", "l2", "l3"]) await cache.get(id);
    expect(cache.bytes).toBe(budget);
    await cache.get("l1"); // used again: l2 is now the least recently used
    await cache.get("l4");
    expect(cache.bytes).toBe(budget);
    loads.length = 0;
    for (const id of ["l1", "l3", "l4"]) await cache.get(id);
    expect(loads).toEqual([]);
    await cache.get("l2");
    expect(loads).toEqual(["l2"]);
    // Small clients fit by the hundred in the room of one large one.
    for (let i = 0; i < 40; i++) await cache.get(`small${i}`);
    expect(cache.bytes).toBeLessThanOrEqual(budget);
  });

  it("estimates a client by its declaration and mapping", () => {
    expect(cachedBytes(client("a", "o", 256 * 1024))).toBeGreaterThan(8 * 256 * 1024);
    expect(cachedBytes({ ...client("a"), mapping: "x".repeat(1000) })).toBe(cachedBytes(client("a")) + 2000);
  });
});
