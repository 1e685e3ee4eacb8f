import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIssuedKey, rawKey } from "../helpers/api-keys.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { adminCall } from "../helpers/seed.js";

/**
 * Measurements (batch of 1000, verifications per second), not assertions on time:
 * `ROSTER_MEASURE=1 npx vitest run test/integration/api-keys.measure.test.ts`. Skipped by default.
 */
let t: TestApp;
beforeAll(async () => {
  if (process.env.ROSTER_MEASURE === "1") t = await createTestApp();
});
afterAll(async () => t?.close());

const report = (line: string) => process.stdout.write(`[measure] ${line}\n`);

describe.skipIf(process.env.ROSTER_MEASURE !== "1")("API key measurements", () => {
  it("imports batches of 1000 keys", async () => {
    const times: number[] = [];
    for (let round = 0; round < 5; round++) {
      const requests = Array.from({ length: 1000 }, (_, i) => ({
        raw_key: rawKey(`measure-${round}-${i}`),
        name: `k${i}`,
        actor_id: `actor-${i % 50}`,
        scopes: ["read"],
        metadata: { i },
      }));
      const started = performance.now();
      const res = await adminCall(t, "POST", "/importedApiKeys:batchCreate", { requests });
      times.push(performance.now() - started);
      expect(res.json().success_count).toBe(1000);
    }
    report(`batchCreate 1000 keys (ms, 5 rounds, over HTTP inject): ${times.map((x) => x.toFixed(0)).join(", ")}`);
  });

  it.each([
    ["imported key, no rate limit", false],
    ["issued key with a rate limit", true],
  ])("verifies: %s", async (_name, limited) => {
    const key = limited
      ? ((await createIssuedKey(t, { rate_limits: [{ name: "m", limit: 1_000_000_000, period: "3600s" }] }))
          .secret as string)
      : rawKey("measure-0-1");
    for (const concurrency of [1, 32]) {
      const total = 4000;
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < total) {
            next++;
            const res = await adminCall(t, "POST", "/apiKeys:verify", { key });
            if (res.json().valid !== true) throw new Error(res.body);
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      report(`verify ${_name}, concurrency ${concurrency}: ${(total / seconds).toFixed(0)}/s`);
    }
  });
});
