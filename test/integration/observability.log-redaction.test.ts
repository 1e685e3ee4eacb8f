import { expect, it } from "vitest";
import { createObservability } from "../../src/observability/index.js";
import { ManualClock } from "../../src/platform/clock.js";
import type { LogFormat } from "../../src/platform/logger.js";
import { createIssuedKey, rawKey, verifyKey } from "../helpers/api-keys.js";
import { createTestApp, createTestDatabase } from "../helpers/app.js";
import { captureLog } from "../helpers/log-capture.js";
import { adminCall, scim, seedClient } from "../helpers/seed.js";
import { startWebhookReceiver } from "../helpers/webhook-receiver.js";
import { testWebhooks } from "../helpers/webhooks.js";
import { ADMIN_TOKEN, PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";

/** An app logging into `lines`, its request log writer and webhooks logging there too. */
async function loggedApp(level: "trace" | "info", format: LogFormat) {
  const { logger, lines } = captureLog(level, format);
  const database = await createTestDatabase();
  const clock = new ManualClock(Date.now());
  const observability = createObservability({ db: database.db, clock, logger });
  const webhooks = testWebhooks(database.db, clock, { logger, wrapSender: observability.wrapSender });
  const t = await createTestApp({ database, clock, extra: { logger, observability, webhooks } });
  return {
    t,
    lines,
    webhooks,
    async close() {
      await webhooks.dispatcher.stop();
      await t.close();
      await database.close();
    },
  };
}

it("logs no secret, password or raw key at trace level through a whole walk-through", async () => {
  const app = await loggedApp("trace", "json");
  const receiver = await startWebhookReceiver();
  const { t } = app;
  const secrets = {
    rotated: "walk-rotated-secret-0123456789",
    webhook: "whsec_walk_0123456789abcdef",
    password: "Walk-Pa55word!",
    patched: "Walk-Patched-Pa55!",
    wrong: "walk-wrong-bearer-0123456789",
    imported: rawKey("walk-imported"),
  };
  try {
    const c = await seedClient(t, { request_log: "all" });
    await adminCall(t, "PATCH", `/scimClients/${c.clientId}?update_mask=webhook`, {
      webhook: { url: receiver.url, secret: secrets.webhook },
    });
    const created = await scim(t, c, "POST", "/Users", {
      schemas: [USER_SCHEMA],
      userName: "walker@example.com",
      password: secrets.password,
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    await scim(t, c, "PATCH", `/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: "replace", path: "password", value: secrets.patched },
        { op: "replace", path: "userName", value: 7 },
      ],
    });
    await scim(t, c, "PATCH", `/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", value: { password: secrets.patched } }],
    });
    await t.request({ method: "GET", url: `${c.base}/Users`, headers: { authorization: `Bearer ${secrets.wrong}` } });
    await t.request({ method: "GET", url: `${c.base}/Users?access_token=${secrets.wrong}`, headers: c.headers });
    await adminCall(t, "POST", "/identities:verifyPassword", {
      identifier: "walker@example.com",
      password: secrets.patched,
    });
    const key = await createIssuedKey(t);
    await verifyKey(t, String(key.secret));
    const rotated = await adminCall(t, "POST", `/issuedApiKeys/${String(key.key_id)}:rotate`, {});
    await adminCall(t, "POST", "/importedApiKeys:batchCreate", {
      requests: [{ raw_key: secrets.imported, name: "walk", organization_id: c.organizationId }],
    });
    await verifyKey(t, secrets.imported);
    await adminCall(t, "PATCH", `/scimClients/${c.clientId}?update_mask=secret`, { secret: secrets.rotated });
    await t.request({ method: "GET", url: "/v2alpha1/admin/organizations", headers: { authorization: "Bearer nope" } });
    await app.webhooks.dispatcher.drain();
    await t.request({ method: "GET", url: "/metrics" });

    const all = [...Object.values(secrets), ADMIN_TOKEN, c.secret, String(key.secret), String(rotated.json().secret)];
    await app.close();
    const output = app.lines.join("");
    // The walk-through did log at trace/debug level: the check is not vacuous.
    expect(app.lines.some((l) => l.includes('"msg":"SCIM request"'))).toBe(true);
    expect(app.lines.some((l) => l.includes('"msg":"admin change"'))).toBe(true);
    for (const secret of all) expect(output, `a log line holds ${secret}`).not.toContain(secret);
  } finally {
    await receiver.close();
    await app.close().catch(() => {});
  }
});

it("logs a failed SCIM request and an admin change at info, a successful SCIM request only at debug", async () => {
  const app = await loggedApp("info", "json");
  try {
    const c = await seedClient(app.t);
    await scim(app.t, c, "GET", "/Users");
    await scim(app.t, c, "GET", "/Users/missing");
    const lines = app.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const failed = lines.filter((l) => l.msg === "SCIM request failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({
      level: 30,
      method: "GET",
      path: `${c.base}/Users/missing`,
      status: 404,
      clientId: c.clientId,
      operation: "users.get",
    });
    expect(typeof failed[0]?.ms).toBe("number");
    expect(lines.some((l) => l.msg === "SCIM request")).toBe(false);
    const changes = lines.filter((l) => l.msg === "admin change");
    expect(changes.map((l) => l.operation)).toEqual(["organizations.create", "scimClients.create"]);
    // A create names what it created; the client's address is there too.
    expect(changes.map((l) => l.target)).toEqual([`organizations/${c.organizationId}`, `scimClients/${c.clientId}`]);
    expect(changes.map((l) => l.ip)).toEqual(["127.0.0.1", "127.0.0.1"]);
  } finally {
    await app.close();
  }
});

it("prints readable single lines with a local time in the pretty format", async () => {
  const { logger, lines } = captureLog("info", "pretty");
  logger.info({ status: 404, clientId: "acme" }, "SCIM request failed");
  await new Promise<void>((resolve) => logger.flush(() => resolve()));
  const line = lines.join("");
  expect(line).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: SCIM request failed/);
  expect(line).toContain('"status":404');
  expect(() => JSON.parse(line)).toThrow();
});
