import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes: Record<string, unknown>;
  readonly links: ReadonlyArray<{ traceId: string; spanId: string }>;
  readonly serviceName: string | undefined;
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it (the exporter adds /v1/traces). */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  readonly paths: string[];
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpBody {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: OtlpAttribute[];
        links?: Array<{ traceId: string; spanId: string }>;
      }>;
    }>;
  }>;
}

const otlpValue = (v: OtlpValue): unknown => v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue;
const attributesOf = (list: OtlpAttribute[] | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map((a) => [a.key, otlpValue(a.value)]));

/** An in-process OTLP/HTTP collector: records the spans of every JSON export it receives, answers 200. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const paths: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      paths.push(req.url ?? "");
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as OtlpBody;
      for (const rs of body.resourceSpans ?? []) {
        const serviceName = attributesOf(rs.resource?.attributes)["service.name"];
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? "",
              name: s.name,
              kind: s.kind,
              attributes: attributesOf(s.attributes),
              links: s.links ?? [],
              serviceName: typeof serviceName === "string" ? serviceName : undefined,
            });
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    paths,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
