import { describe, expect, it } from "vitest";
import { ScimClientCache } from "../../src/directory/scim-clients/cache.js";
import type { ScimClient } from "../../src/directory/scim-clients/service.js";
import { ManualClock } from "../../src/platform/clock.js";

const client = (id: string, org = "o1") => ({ clientId: id, organizationId: org }) as ScimClient;

describe("ScimClientCache", () => {
  it("loads once within the TTL and again after it", async () => {
    const clock = new ManualClock();
    let loads = 0;
    const cache = new ScimClientCache(async (id) => {
      loads++;
      return client(id);
    }, clock);
    await cache.get("a");
    await cache.get("a");
    expect(loads).toBe(1);
    clock.advance(5_001);
    await cache.get("a");
    expect(loads).toBe(2);
  });

  it("does not keep misses (a client created elsewhere is found at once), and forgets on demand", async () => {
    let loads = 0;
    let exists = false;
    const cache = new ScimClientCache(async (id) => {
      loads++;
      return exists ? client(id) : undefined;
    }, new ManualClock());
    expect(await cache.get("x")).toBeUndefined();
    exists = true;
    expect(await cache.get("x")).toMatchObject({ clientId: "x" });
    await cache.get("x");
    expect(loads).toBe(2);
    cache.forget("x");
    await cache.get("x");
    expect(loads).toBe(3);
  });

  it("refresh reads again even within the TTL", async () => {
    let loads = 0;
    const cache = new ScimClientCache(async (id) => {
      loads++;
      return client(id);
    }, new ManualClock());
    await cache.get("a");
    await cache.refresh("a");
    await cache.get("a");
    expect(loads).toBe(2);
  });

  it("forgets every client of an organization", async () => {
    let loads = 0;
    const cache = new ScimClientCache(async (id) => {
      loads++;
      return client(id, id.startsWith("a") ? "oa" : "ob");
    }, new ManualClock());
    await Promise.all(["a1", "a2", "b1"].map((id) => cache.get(id)));
    cache.forgetOrganization("oa");
    await Promise.all(["a1", "a2", "b1"].map((id) => cache.get(id)));
    expect(loads).toBe(5);
  });
});
