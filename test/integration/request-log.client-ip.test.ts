import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createObservability, type Observability } from "../../src/observability/index.js";
import { ManualClock } from "../../src/platform/clock.js";
import { createLogger } from "../../src/platform/logger.js";
import type { TrustProxy } from "../../src/platform/trust-proxy.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";
import { adminCall, seedClient } from "../helpers/seed.js";

// A request-log entry keeps the client's IP as Fastify sees it (`request.ip`): the address of the peer, or — only
// when ROSTER_TRUST_PROXY trusts that peer — the client X-Forwarded-For names, the nearest address not trusted.
// Requests come from 127.0.0.1.

function observedAppWith(trustProxy: TrustProxy | undefined) {
  let database: TestDatabase | undefined;
  let t: TestApp | undefined;
  let obs: Observability | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
    const clock = new ManualClock(Date.now());
    obs = createObservability({ db: database.db, clock, logger: createLogger("silent") });
    t = await createTestApp({
      database,
      clock,
      extra: { observability: obs, ...(trustProxy === undefined ? {} : { trustProxy }) },
    });
  });
  afterAll(async () => {
    await t?.close();
    await database?.close();
  });

  /** The IP the log kept for one SCIM request with these headers, in a page and in the entry's detail. */
  return async (headers: Record<string, string>): Promise<unknown> => {
    if (t === undefined || obs === undefined) throw new Error("the app exists once beforeAll has run");
    const c = await seedClient(t, { request_log: "all" });
    const res = await t.request({
      method: "GET",
      url: `${c.base}/ServiceProviderConfig`,
      headers: { ...c.headers, ...headers },
    });
    expect(res.statusCode).toBe(200);
    await obs.writer.flush();
    const page = await adminCall(t, "GET", `/scimClients/${c.clientId}/requests`);
    expect(page.statusCode, page.body).toBe(200);
    const entries = page.json().requests as Array<{ id: string; client_ip: unknown }>;
    expect(entries).toHaveLength(1);
    const entry = entries[0] as { id: string; client_ip: unknown };
    const detail = await adminCall(t, "GET", `/scimClients/${c.clientId}/requests/${entry.id}`);
    expect(detail.json().client_ip).toEqual(entry.client_ip);
    return entry.client_ip;
  };
}

describe("trusted (ROSTER_TRUST_PROXY=127.0.0.1)", () => {
  const ipOf = observedAppWith(["127.0.0.1"]);

  it("keeps the client named in X-Forwarded-For", async () => {
    expect(await ipOf({ "x-forwarded-for": "203.0.113.7" })).toBe("203.0.113.7");
  });

  it("keeps the nearest untrusted address of a chain, not what the client wrote first", async () => {
    expect(await ipOf({ "x-forwarded-for": "198.51.100.66, 203.0.113.7" })).toBe("203.0.113.7");
  });

  it("keeps the peer when there is no X-Forwarded-For", async () => {
    expect(await ipOf({})).toBe("127.0.0.1");
  });
});

describe("off (the default)", () => {
  const ipOf = observedAppWith(undefined);

  it("keeps the peer and ignores a forged X-Forwarded-For", async () => {
    expect(await ipOf({ "x-forwarded-for": "203.0.113.7" })).toBe("127.0.0.1");
  });
});

describe("a peer outside the trusted ranges (ROSTER_TRUST_PROXY=10.0.0.0/8)", () => {
  const ipOf = observedAppWith(["10.0.0.0/8"]);

  it("keeps the peer: its X-Forwarded-For is not believed", async () => {
    expect(await ipOf({ "x-forwarded-for": "203.0.113.7" })).toBe("127.0.0.1");
  });
});
