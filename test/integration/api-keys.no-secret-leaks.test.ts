import { pino } from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { REDACT_PATHS } from "../../src/platform/logger.js";
import { createIssuedKey, rawKey } from "../helpers/api-keys.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { adminCall } from "../helpers/seed.js";

/** Secrets and raw keys never reach a log line, a later response or an error. */
let t: TestApp;
const lines: string[] = [];
beforeAll(async () => {
  const logger = pino(
    { level: "trace", redact: { paths: REDACT_PATHS, censor: "[redacted]" } },
    {
      write: (line: string) => {
        lines.push(line);
      },
    },
  );
  t = await createTestApp({ extra: { logger } });
});
afterAll(async () => t.close());

it("keeps every secret and raw key out of logs, reads, lists and errors", async () => {
  const issued = await createIssuedKey(t, { name: "leak-check" });
  const secret = issued.secret as string;
  const raw = rawKey("leak-check-raw");
  const responses: string[] = [];
  const call = async (...args: Parameters<typeof adminCall>) => {
    const res = await adminCall(...args);
    responses.push(res.body);
    return res;
  };
  const rotated = (await call(t, "POST", `/issuedApiKeys/${issued.key_id}:rotate`, { grace_period: "60s" })).json();
  responses.pop(); // the rotation answer carries the new secret by design
  await call(t, "POST", "/importedApiKeys:batchCreate", { requests: [{ raw_key: raw, name: "n", actor_id: "a" }] });
  await call(t, "POST", "/importedApiKeys:batchCreate", { requests: [{ raw_key: raw, name: "n", actor_id: "a" }] });
  await call(t, "POST", "/importedApiKeys:batchCreate", { requests: [{ raw_key: raw, name: 7, actor_id: "a" }] });
  await call(t, "POST", "/apiKeys:verify", { key: secret });
  await call(t, "POST", "/apiKeys:verify", { key: raw });
  await call(t, "POST", "/apiKeys:verify", { key: rotated.secret });
  await call(t, "GET", `/issuedApiKeys/${issued.key_id}`);
  await call(t, "GET", "/issuedApiKeys");
  await call(t, "GET", "/importedApiKeys");
  await call(t, "PATCH", `/issuedApiKeys/${issued.key_id}?update_mask=secret`, { issued_api_key: { secret } });
  await call(t, "POST", "/apiKeys:verify", { key: { nested: secret } });
  await call(t, "POST", "/issuedApiKeys", { name: secret.length, scopes: [secret, 1] });

  expect(responses.length).toBe(12);
  for (const body of responses) {
    expect(body).not.toContain(secret);
    expect(body).not.toContain(rotated.secret);
    expect(body).not.toContain(raw);
  }
  const log = lines.join("");
  expect(log).not.toContain(secret);
  expect(log).not.toContain(rotated.secret);
  expect(log).not.toContain(raw);
});
