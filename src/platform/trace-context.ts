import { context, createContextKey, type Link, type Span, trace, TraceFlags } from "@opentelemetry/api";

/**
 * The request's server span, kept in the request's context beside the active span: an event written deep inside a
 * handler (under the handler span, a database statement's span) is linked to the request itself.
 */
export const SERVER_SPAN_KEY = createContextKey("roster.server_span");

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const INVALID_TRACE_ID = "00000000000000000000000000000000";
const INVALID_SPAN_ID = "0000000000000000";

/**
 * The W3C `traceparent` of the request being served (its server span; else the active span), or null when nothing
 * is traced. With tracing off no context manager is registered, so this is one map lookup on the root context.
 */
export function currentTraceparent(): string | null {
  const active = context.active();
  const span = (active.getValue(SERVER_SPAN_KEY) as Span | undefined) ?? trace.getSpan(active);
  if (span === undefined) return null;
  const sc = span.spanContext();
  if (sc.traceId === INVALID_TRACE_ID || sc.spanId === INVALID_SPAN_ID) return null;
  const flags = (sc.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED ? "01" : "00";
  return `00-${sc.traceId}-${sc.spanId}-${flags}`;
}

/** A span link to the span a stored `traceparent` names; none for null or a malformed value. */
export function linkTo(traceparent: string | null | undefined): Link[] {
  if (traceparent === null || traceparent === undefined) return [];
  const m = TRACEPARENT.exec(traceparent);
  if (m === null) return [];
  const [, traceId = "", spanId = "", flags = "00"] = m;
  if (traceId === INVALID_TRACE_ID || spanId === INVALID_SPAN_ID) return [];
  return [{ context: { traceId, spanId, traceFlags: Number.parseInt(flags, 16), isRemote: true } }];
}
