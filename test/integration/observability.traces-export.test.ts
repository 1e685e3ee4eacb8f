import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createObservability, startTracing, type Tracing } from "../../src/observability/index.js";
import { ManualClock } from "../../src/platform/clock.js";
import { createLogger } from "../../src/platform/logger.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { useTestApp } from "../helpers/suite.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../helpers/otlp-receiver.js";
import { seedClient } from "../helpers/seed.js";
import { testWebhooks } from "../helpers/webhooks.js";
import type { Webhooks } from "../../src/webhooks/index.js";
import { USER_SCHEMA } from "../helpers/constants.js";

const { database, receiver: hooks } = useTestApp({ app: false, hooks: true });
let collector: OtlpReceiver;
let tracing: Tracing;
let webhooks: Webhooks;
let t: TestApp;

beforeAll(async () => {
  collector = await startOtlpReceiver();
  // The standard variables, read by the SDK itself.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.url;
  process.env.OTEL_SERVICE_NAME = "roster-under-test";
  tracing = startTracing();
  const clock = new ManualClock(Date.now());
  const observability = createObservability({
    db: database.db,
    clock,
    logger: createLogger("silent"),
    tracer: tracing.tracer,
  });
  webhooks = testWebhooks(database.db, clock, { wrapSender: observability.wrapSender });
  t = await createTestApp({ database, clock, extra: { observability, webhooks } });
});
afterAll(async () => {
  await webhooks.dispatcher.stop();
  await t.close();
  await tracing.shutdown();
  await collector.close();
});

/** Spans of one trace, each with its children. */
function treeOf(spans: readonly ReceivedSpan[], root: ReceivedSpan) {
  const inTrace = spans.filter((s) => s.traceId === root.traceId);
  const childrenOf = (s: ReceivedSpan) => inTrace.filter((c) => c.parentSpanId === s.spanId);
  const descendants = (s: ReceivedSpan): ReceivedSpan[] => childrenOf(s).flatMap((c) => [c, ...descendants(c)]);
  return { inTrace, childrenOf, descendants };
}

it("exports a SCIM request as one trace: server span → handler → mapping evaluation and each database statement", async () => {
  const c = await seedClient(t, { webhook: { url: hooks.url, secret: "whsec_traces_0123456789" } });
  const res = await t.request({
    method: "POST",
    url: `${c.base}/Users`,
    headers: { ...c.headers, traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" },
    payload: JSON.stringify({ schemas: [USER_SCHEMA], userName: "traced@example.com", password: "Trace-Pa55!" }),
  });
  expect(res.statusCode, res.body).toBe(201);
  await webhooks.dispatcher.drain();
  await tracing.flush();

  expect(collector.paths.every((p) => p === "/v1/traces")).toBe(true);
  const server = collector.spans.find((s) => s.name === "scim users.create");
  expect(server, collector.spans.map((s) => s.name).join(", ")).toBeDefined();
  if (server === undefined) return;
  // The caller's trace context is honoured: the request joins its trace.
  expect(server.traceId).toBe("0af7651916cd43dd8448eb211c80319c");
  expect(server.parentSpanId).toBe("b7ad6b7169203331");
  expect(server.kind).toBe(2);
  expect(server.serviceName).toBe("roster-under-test");
  expect(server.attributes).toMatchObject({
    "http.request.method": "POST",
    "http.route": "/scim/:clientId/v2/Users",
    "http.response.status_code": 201,
    "roster.operation": "scim users.create",
  });

  const { childrenOf, descendants } = treeOf(collector.spans, server);
  const handler = childrenOf(server).find((s) => s.name === "handler scim users.create");
  expect(handler).toBeDefined();
  if (handler === undefined) return;
  const underHandler = descendants(handler);
  expect(underHandler.some((s) => s.name === "mapping.evaluate")).toBe(true);
  const statements = underHandler.filter((s) => s.attributes["db.system"] === "postgresql");
  expect(statements.length).toBeGreaterThanOrEqual(1);
  expect(statements.some((s) => String(s.attributes["db.statement"]).toLowerCase().includes("insert"))).toBe(true);
  // The client lookup runs before the handler, still in the request's trace.
  expect(descendants(server).filter((s) => s.attributes["db.system"] === "postgresql").length).toBeGreaterThan(
    statements.length - 1,
  );

  const delivery = collector.spans.find((s) => s.name === "webhook.deliver");
  expect(delivery?.attributes["roster.delivery_success"]).toBe(true);
  expect(JSON.stringify(collector.spans)).not.toContain("Trace-Pa55!");
  expect(JSON.stringify(collector.spans)).not.toContain(c.secret);
});

it("links the webhook delivery of a request's event to the request's server span; the delivery carries no trace header", async () => {
  const c = await seedClient(t, { webhook: { url: hooks.url, secret: "whsec_traces_link_0123456789" } });
  const spansBefore = collector.spans.length;
  const hooksBefore = hooks.received.length;
  const res = await t.request({
    method: "POST",
    url: `${c.base}/Users`,
    headers: c.headers,
    payload: JSON.stringify({ schemas: [USER_SCHEMA], userName: "linked@example.com" }),
  });
  expect(res.statusCode, res.body).toBe(201);
  const { rows } = await sql<{ id: string; traceparent: string | null }>`
    select id, traceparent from webhook_outbox where client_id = ${c.clientId} and event = 'user.created'`.execute(
    database.db,
  );
  expect(rows).toHaveLength(1);
  await webhooks.dispatcher.drain();
  await tracing.flush();

  const fresh = collector.spans.slice(spansBefore);
  const server = fresh.find((s) => s.name === "scim users.create");
  const delivery = fresh.find((s) => s.name === "webhook.deliver" && s.attributes["roster.webhook_id"] === rows[0]?.id);
  expect(server, fresh.map((s) => s.name).join(", ")).toBeDefined();
  expect(delivery, fresh.map((s) => s.name).join(", ")).toBeDefined();
  if (server === undefined || delivery === undefined) return;
  // The outbox row keeps the request's server span (not the handler's or a statement's span under it).
  expect(rows[0]?.traceparent).toBe(`00-${server.traceId}-${server.spanId}-01`);
  expect(delivery.links.map((l) => ({ traceId: l.traceId, spanId: l.spanId }))).toEqual([
    { traceId: server.traceId, spanId: server.spanId },
  ]);
  // A link, not a parent: the delivery runs later, in the dispatcher's own trace.
  expect(delivery.traceId).not.toBe(server.traceId);

  const sent = hooks.received.slice(hooksBefore);
  expect(sent).toHaveLength(1);
  expect(Object.keys(sent[0]?.headers ?? {}).sort()).toEqual([
    "connection",
    "content-length",
    "content-type",
    "host",
    "service-signature",
    "user-agent",
    "webhook-id",
    "webhook-signature",
    "webhook-timestamp",
  ]);
});
