/**
 * What capturing the request's trace context for an outbox row costs (currentTraceparent, called once per
 * statement that writes events with a webhook): with tracing off (no SDK registered, as without
 * OTEL_EXPORTER_OTLP_ENDPOINT), then inside an active span of the registered SDK.
 * Run: npx tsx bench/trace-context-cost.ts
 */
import { performance } from "node:perf_hooks";
import { context, trace } from "@opentelemetry/api";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { currentTraceparent } from "../src/platform/trace-context.js";

const N = 2_000_000;
let sink = 0;

function measure(label: string): void {
  for (let i = 0; i < 100_000; i++) sink += currentTraceparent()?.length ?? 0; // warm-up (JIT)
  const rounds: number[] = [];
  for (let r = 0; r < 5; r++) {
    const start = performance.now();
    for (let i = 0; i < N; i++) sink += currentTraceparent()?.length ?? 0;
    rounds.push(((performance.now() - start) * 1e6) / N);
  }
  rounds.sort((a, b) => a - b);
  process.stdout.write(`${label}: ${rounds[2]?.toFixed(1)} ns a call (median of 5 × ${N})\n`);
}

measure("tracing off");
// What startTracing registers: the AsyncLocalStorage context manager and the provider.
const provider = new NodeTracerProvider();
provider.register();
const span = provider.getTracer("bench").startSpan("request");
context.with(trace.setSpan(context.active(), span), () => measure("tracing on, inside a span"));
span.end();
if (sink < 0) process.stdout.write("unreachable\n");
