import { context, propagation, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import type { FastifyInstance, FastifyRequest } from "fastify";
import pg from "pg";
import type { WebhookSender } from "../webhooks/sender.js";
import { adminOperation, scimOperation } from "./operation.js";
import { linkTo, SERVER_SPAN_KEY } from "../platform/trace-context.js";

const TRACER_NAME = "roster";
const SHUTDOWN_WAIT_MS = 3_000;

export interface Tracing {
  readonly tracer: Tracer;
  /** Exports every ended span now (tests). */
  flush(): Promise<void>;
  /**
   * Exports what is left and stops. Never throws and takes at most SHUTDOWN_WAIT_MS: an unreachable collector
   * must not turn a clean shutdown into a failed one. Resolves to the export error, if any.
   */
  shutdown(): Promise<unknown>;
}

/**
 * The official SDK: a Node tracer provider (AsyncLocalStorage context, W3C trace context), a batch processor and the
 * OTLP/HTTP exporter, all configured by the standard OTEL_* variables (endpoint, headers, sampler, batch sizes,
 * service name and resource attributes). PostgreSQL statements become spans through the pg instrumentation, applied
 * to the pg module Roster already loaded (ES module imports are not seen by require hooks).
 */
export function startTracing(): Tracing {
  const resource = resourceFromAttributes({ "service.name": "roster" }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();
  const pgInstrumentation = new PgInstrumentation({ requireParentSpan: true });
  pgInstrumentation.setTracerProvider(provider);
  for (const definition of pgInstrumentation.getModuleDefinitions()) {
    if (definition.name === "pg") definition.patch?.(pg);
  }
  return {
    tracer: provider.getTracer(TRACER_NAME),
    flush: () => provider.forceFlush(),
    async shutdown() {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<unknown>((resolve) => {
        timer = setTimeout(
          () => resolve(new Error(`trace export still pending after ${SHUTDOWN_WAIT_MS} ms`)),
          SHUTDOWN_WAIT_MS,
        );
        timer.unref();
      });
      const done = provider.shutdown().then(
        () => undefined,
        (e: unknown) => e,
      );
      const result = await Promise.race([done, timeout]);
      clearTimeout(timer);
      return result;
    },
  };
}

declare module "fastify" {
  interface FastifyRequest {
    traceSpan: Span | undefined;
    traceHandlerSpan: Span | undefined;
  }
}

/**
 * One trace per request: a server span from arrival to the last byte (named by its operation, `users.create`), a
 * child span for the route handler, and under it what the handler does (database statements, mapping evaluation).
 * Callback-style hooks run the rest of the request inside the span's context.
 */
export function installRequestTracing(app: FastifyInstance, tracer: Tracer): void {
  app.decorateRequest("traceSpan", undefined);
  app.decorateRequest("traceHandlerSpan", undefined);
  app.addHook("onRequest", (req, _reply, done) => {
    const parent = propagation.extract(context.active(), req.headers);
    const span = tracer.startSpan(
      `${req.method} ${req.routeOptions.url ?? "unmatched"}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          "http.request.method": req.method,
          "url.path": req.url.split("?")[0] ?? req.url,
          ...(req.routeOptions.url === undefined ? {} : { "http.route": req.routeOptions.url }),
        },
      },
      parent,
    );
    req.traceSpan = span;
    context.with(trace.setSpan(parent, span).setValue(SERVER_SPAN_KEY, span), done);
  });
  app.addHook("preHandler", (req, _reply, done) => {
    const parent = req.traceSpan;
    if (parent === undefined) {
      done();
      return;
    }
    const ctx = trace.setSpan(context.active(), parent);
    const span = tracer.startSpan(`handler ${operationOf(req)}`, {}, ctx);
    req.traceHandlerSpan = span;
    context.with(trace.setSpan(ctx, span), done);
  });
  app.addHook("onSend", (req, _reply, payload, done) => {
    req.traceHandlerSpan?.end();
    req.traceHandlerSpan = undefined;
    done(null, payload);
  });
  app.addHook("onResponse", (req, reply, done) => {
    const span = req.traceSpan;
    if (span !== undefined) {
      const operation = operationOf(req);
      span.updateName(operation);
      span.setAttribute("roster.operation", operation);
      span.setAttribute("http.response.status_code", reply.statusCode);
      const clientId = req.scimClient?.clientId;
      if (clientId !== undefined) span.setAttribute("roster.scim_client_id", clientId);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
    done();
  });
}

function operationOf(req: FastifyRequest): string {
  const route = req.routeOptions.url;
  if (route?.startsWith("/scim/")) return `scim ${scimOperation(req.method, route)}`;
  if (route?.startsWith("/v2alpha1/admin")) return `admin ${adminOperation(req.method, route)}`;
  return `${req.method} ${route ?? "unmatched"}`;
}

/** A span around every evaluation of a connection's data mapping (JSONata or the default in plain code). */
export function traceMappings<
  M extends { forSource(source: string | null, organization?: string): Promise<MappingLike> },
>(mapper: M, tracer: Tracer): M {
  const forSource = mapper.forSource.bind(mapper);
  mapper.forSource = async (source, organization) => {
    const compiled = await forSource(source, organization);
    return {
      ...compiled,
      evaluate: (user: never) =>
        tracer.startActiveSpan("mapping.evaluate", async (span) => {
          span.setAttribute("roster.mapping", source === null ? "default" : "custom");
          try {
            return await compiled.evaluate(user);
          } catch (e) {
            span.setStatus({ code: SpanStatusCode.ERROR });
            throw e;
          } finally {
            span.end();
          }
        }),
    };
  };
  return mapper;
}

interface MappingLike {
  evaluate(user: never): Promise<unknown>;
}

/**
 * A client span per webhook delivery attempt: receiver latency and outcome, never the body or the secret. It links
 * to the request that wrote the event (its stored traceparent); the delivery itself carries no trace header.
 */
export function traceSender(sender: WebhookSender, tracer: Tracer): WebhookSender {
  return {
    send: (request) =>
      tracer.startActiveSpan(
        "webhook.deliver",
        {
          kind: SpanKind.CLIENT,
          attributes: { "roster.webhook_id": request.webhookId },
          links: linkTo(request.traceparent),
        },
        async (span) => {
          const result = await sender.send(request);
          if (result.statusCode !== null) span.setAttribute("http.response.status_code", result.statusCode);
          span.setAttribute("roster.delivery_success", result.success);
          if (!result.success) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
          return result;
        },
      ),
  };
}
