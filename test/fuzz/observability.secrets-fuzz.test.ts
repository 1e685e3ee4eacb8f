import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createObservability, type Observability } from "../../src/observability/index.js";
import { ManualClock } from "../../src/platform/clock.js";
import { createTestApp, createTestDatabase, type WebhooksApp } from "../helpers/app.js";
import { PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { secretsExtension } from "../helpers/extensions.js";
import { captureLog } from "../helpers/log-capture.js";
import { adminCall, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { type PlainReceiver, startPlainReceiver } from "../helpers/webhook-receiver.js";
import { check, countStatus, runsFor, timeoutFor } from "./harness.js";

/**
 * Property-based: no password, secret or token a SCIM client or a webhook receiver sends — however it is spelt —
 * ever appears in the request log (as the admin API answers it), the webhook event log (its rows and its admin
 * answer), the events feed, or a log line.
 */
const EXT = "urn:example:fuzz:1.0:User";
const EXTENSION = secretsExtension(EXT, "FuzzUser", "kioskPin");

const log = captureLog("debug");
let t: WebhooksApp;
let obs: Observability;
let c: SeededClient;
let hooked: SeededClient;
let receiver: PlainReceiver;
let answer = "";
const users: string[] = [];
let hookUsers = 0;

beforeAll(async () => {
  receiver = await startPlainReceiver(() => ({ status: 502, headers: { "content-type": "text/plain" }, body: answer }));
  const database = await createTestDatabase();
  const clock = new ManualClock(Date.now());
  // Every SCIM request writes a line at debug level: the property reads them all.
  const logger = log.logger;
  obs = createObservability({ db: database.db, clock, logger });
  t = await createTestApp({
    database,
    clock,
    webhooks: { wrapSender: obs.wrapSender },
    extra: { observability: obs, logger },
  });
  c = await seedClient(t, { request_log: "all", extensions: [EXTENSION] });
  hooked = await seedClient(t, {
    webhook: { url: receiver.url, secret: "whsec_fuzz_0123456789" },
    log_webhook_events: true,
  });
  for (let i = 0; i < 3; i++) {
    const u = await scim(t, c, "POST", "/Users", { userName: `fuzz${i}@example.com` });
    users.push(u.json().id as string);
  }
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

/** A word in any mix of cases (and `K` for `k`, which lower-cases to it, as the PATCH engine compares names). */
const spelt = (word: string) =>
  fc.array(fc.integer({ min: 0, max: 2 }), { minLength: word.length, maxLength: word.length }).map((how) =>
    [...word]
      .map((ch, i) => {
        const h = how[i] ?? 0;
        if (ch === "k" && h === 2) return "\u212A";
        return h === 1 ? ch.toUpperCase() : ch.toLowerCase();
      })
      .join(""),
  );
const padded = (word: fc.Arbitrary<string>) =>
  fc
    .tuple(fc.constantFrom("", " ", "\t", " \u00a0"), word, fc.constantFrom("", " ", "  ", "\t\n"))
    .map(([a, w, b]) => `${a}${w}${b}`);
/** The secret of a case: distinctive, so finding it anywhere is a leak. */
const secret = fc.stringMatching(/^[A-Za-z0-9]{8,14}$/).map((s) => `Qz${s}`);

const passwordPath = fc.oneof(
  padded(spelt("password")),
  padded(fc.tuple(spelt(USER_SCHEMA), spelt("password")).map(([u, p]) => `${u}:${p}`)),
);
const extensionPath = fc.oneof(
  padded(fc.tuple(spelt(EXT), spelt("kioskPin")).map(([u, p]) => `${u}:${p}`)),
  padded(spelt("kioskPin")),
  padded(fc.tuple(spelt(EXT), spelt("recovery.code")).map(([u, p]) => `${u}:${p}`)),
);
const opKey = spelt("op");
const pathKey = spelt("path");
const valueKey = spelt("value");
const opName = fc.oneof(spelt("replace"), spelt("add"));
/** An operation that fails, so that the PATCH is refused and logged with the secret's operation in it. */
const noise = fc.constantFrom(
  [],
  [{ op: "replace", path: "userName", value: 42 }],
  [{ op: "replace", path: "displayName", value: "kept" }],
);

type Case = { method: "POST" | "PUT" | "PATCH" | "GET"; url: (id: string) => string; body?: unknown; auth?: string };

const patchCase = (ops: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<(s: string) => Case> =>
  fc.tuple(ops, noise).map(([op, more]) => (s: string) => ({
    method: "PATCH",
    url: (id) => `/Users/${id}`,
    body: JSON.parse(
      JSON.stringify({ schemas: [PATCH_OP], Operations: [op, ...more] }).replaceAll("__SECRET__", s),
    ) as unknown,
  }));

const withPath = (path: fc.Arbitrary<string>) =>
  fc
    .tuple(opKey, opName, pathKey, path, valueKey)
    .map(([o, name, p, target, v]) => ({ [o]: name, [p]: target, [v]: "__SECRET__" }));
const pathless = (key: fc.Arbitrary<string>) =>
  fc.tuple(opKey, opName, valueKey, key).map(([o, name, v, k]) => ({ [o]: name, [v]: { [k]: "__SECRET__" } }));
const urnObject = fc
  .tuple(opKey, opName, valueKey, spelt(EXT), padded(spelt("kioskPin")))
  .map(([o, name, v, urn, k]) => ({ [o]: name, [v]: { [urn]: { [k]: "__SECRET__", site: "kept" } } }));

const cases: fc.Arbitrary<(s: string) => Case> = fc.oneof(
  patchCase(withPath(passwordPath)),
  patchCase(withPath(extensionPath)),
  patchCase(pathless(passwordPath)),
  patchCase(pathless(extensionPath)),
  patchCase(urnObject),
  fc.tuple(fc.constantFrom("POST", "PUT") as fc.Arbitrary<"POST" | "PUT">, spelt("password")).map(
    ([method, key]) =>
      (s: string): Case => ({
        method,
        url: (id: string) => (method === "POST" ? "/Users" : `/Users/${id}`),
        body: {
          schemas: [USER_SCHEMA, EXT],
          userName: `fuzz-${s.slice(2, 8)}@example.com`,
          [key]: s,
          [EXT]: { kioskPin: s, recovery: { code: s, hint: "kept" } },
        },
      }),
  ),
  fc.tuple(fc.constantFrom("access_token", "client_secret", "api_key", "password"), fc.boolean()).map(
    ([name, filter]) =>
      (s: string): Case => ({
        method: "GET",
        url: () =>
          filter
            ? `/Users?filter=${encodeURIComponent(`${name} eq "${s}"`)}`
            : `/Users?count=1&${encodeURIComponent(name.toUpperCase())}=${s}`,
      }),
  ),
  fc.constant(
    (s: string): Case => ({
      method: "POST",
      url: () => "/Bulk",
      body: {
        Operations: [
          { method: "POST", path: "/Users", data: { userName: "b@example.com", password: s } },
          { method: "PATCH", path: "/Users/x", data: { Operations: [{ op: "add", path: "password ", value: s }] } },
        ],
      },
    }),
  ),
  fc.constant((s: string): Case => ({ method: "GET", url: () => "/Users", auth: `Bearer ${s}` })),
);

async function requestLogText(): Promise<string> {
  await obs.writer.flush();
  const list = await adminCall(t, "GET", `/scimClients/${c.clientId}/requests?page_size=1`);
  expect(list.statusCode, list.body).toBe(200);
  const [entry] = list.json().requests as Array<{ id: string }>;
  if (entry === undefined) return list.body;
  const detail = await adminCall(t, "GET", `/scimClients/${c.clientId}/requests/${entry.id}`);
  return list.body + detail.body;
}

describe("secrets fuzz: no generated secret is kept anywhere a person reads", () => {
  const logRuns = runsFor(0.06);
  it(`the SCIM request log and log lines (${logRuns} cases)`, { timeout: timeoutFor(logRuns * 5) }, async () => {
    const arbitrary = fc.tuple(cases, secret, fc.integer({ min: 0, max: 2 }));
    await check("request log secrets", arbitrary, logRuns, async ([make, s, which]) => {
      log.lines.length = 0;
      const k = make(s);
      const res = await t.request({
        method: k.method,
        url: `${c.base}${k.url(users[which] ?? "")}`,
        headers: { authorization: k.auth ?? `Bearer ${c.secret}`, "content-type": "application/scim+json" },
        ...(k.body === undefined ? {} : { payload: JSON.stringify(k.body) }),
      });
      countStatus(res.statusCode);
      expect(res.statusCode, res.body).toBeLessThan(500);
      const where = `${k.method} ${JSON.stringify(k.body ?? k.url(""))} → ${res.statusCode}`;
      expect(await requestLogText(), `request log after ${where}`).not.toContain(s);
      expect(log.text(), `log lines after ${where}`).not.toContain(s);
      expect(res.body, `SCIM answer to ${where}`).not.toContain(s);
    });
  });

  const hookRuns = runsFor(0.02);
  it(`the webhook event log and the events feed (${hookRuns} cases)`, {
    timeout: timeoutFor(hookRuns * 15),
  }, async () => {
    const name = fc.constantFrom("password", "db_password", "api_key", "access_token", "client_secret", "token");
    const form = fc.constantFrom(
      (n: string, s: string) => `${n}=${s}`,
      (n: string, s: string) => `config:\n  ${n}: ${s}\n`,
      (n: string, s: string) => JSON.stringify({ error: "denied", [n]: s }),
      (n: string, s: string) => JSON.stringify({ detail: `bad ${n}=${s}` }),
      (_n: string, s: string) => `Authorization: Bearer ${s}`,
      (n: string, s: string) => JSON.stringify({ [n]: s }).slice(0, -3),
    );
    await check("event log secrets", fc.tuple(name, form, secret, secret), hookRuns, async ([n, f, s, pw]) => {
      log.lines.length = 0;
      answer = f(n, s);
      const created = await scim(t, hooked, "POST", "/Users", {
        schemas: [USER_SCHEMA],
        // Numbered: fast-check repeats values, and a second user of one userName is a 409.
        userName: `hook-${++hookUsers}@example.com`,
        password: pw,
      });
      countStatus(created.statusCode);
      expect(created.statusCode, created.body).toBe(201);
      await t.webhooks.dispatcher.drain();
      const events = await adminCall(t, "GET", `/scimClients/${hooked.clientId}/webhookEvents?page_size=1`);
      expect(events.statusCode, events.body).toBe(200);
      const rows = await t.db
        .selectFrom("webhook_events")
        .selectAll()
        .where("client_id", "=", hooked.clientId)
        .orderBy("attempted_at", "desc")
        .limit(1)
        .execute();
      expect(rows).toHaveLength(1);
      const feed = await adminCall(t, "GET", `/events?organization_id=${hooked.organizationId}&after=now`);
      const stored = `${events.body}${JSON.stringify(rows)}${feed.body}${log.text()}`;
      expect(stored, `answer ${JSON.stringify(answer)}`).not.toContain(s);
      expect(stored, "the user's password").not.toContain(pw);
    });
  });
});
