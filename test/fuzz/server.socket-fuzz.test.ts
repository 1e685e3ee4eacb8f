import { connect } from "node:net";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { adminHeaders } from "../helpers/seed.js";
import { hostileString, rawEncode } from "./arbitraries.js";
import { check, countStatus, runsFor, timeoutFor } from "./harness.js";
import { ERROR_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * Over a real socket, where Node's HTTP parser answers before Fastify does: oversized URLs and headers, odd header
 * bytes, malformed request lines. Every request gets an answer (never a dropped connection), never a 5xx, and
 * under /scim/ or the admin API the protocol's error body.
 */
const { t, c } = useTestApp({ seed: true, listen: true });
let port = 0;

beforeAll(() => {
  port = Number(new URL(t.url).port);
});

interface RawAnswer {
  readonly status: number;
  readonly headers: string;
  readonly body: string;
}

/** Sends raw bytes and reads until the server closes: an answer, or a failure naming what happened. */
function rawRequest(port: number, bytes: Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error("no complete answer within 10 s"));
    }, 10_000);
    socket.on("data", (d) => chunks.push(d));
    // The server may close after answering while we still write a huge request: what was read counts.
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString("utf8");
      const match = /^HTTP\/1\.1 (\d{3}) /.exec(text);
      if (match?.[1] === undefined) {
        reject(new Error(`connection closed without an answer (${chunks.length} chunks)`));
        return;
      }
      // Only the first answer: a CR LF in a header value ends the headers early, and the rest is a second request.
      const split = text.indexOf("\r\n\r\n");
      const headers = text.slice(0, split);
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(headers)?.[1] ?? 0);
      resolve({ status: Number(match[1]), headers, body: text.slice(split + 4, split + 4 + length) });
    });
    // Not end(): a client that half-closes before the answer makes Node abort the request, answered or not.
    socket.write(bytes);
  });
}

function expectAnswer(answer: RawAnswer, protocol: "scim" | "admin" | "other", what: string): void {
  const context = `${what.slice(0, 200)} → ${answer.status} ${answer.body.slice(0, 200)}`;
  expect(answer.status, context).toBeLessThan(500);
  if (answer.status < 400 || protocol === "other") return;
  const body = answer.body;
  if (protocol === "scim") {
    expect(answer.headers, context).toMatch(/content-type: application\/scim\+json/i);
    expect(JSON.parse(body).schemas, context).toEqual([ERROR_SCHEMA]);
  } else {
    expect(answer.headers, context).toMatch(/content-type: application\/json/i);
    expect(JSON.parse(body).error.code, context).toBe(answer.status);
  }
}

const headerValue = fc.oneof(
  hostileString.map((s) => Buffer.from(s, "utf8").toString("latin1")),
  fc.constantFrom("x".repeat(20_000), "\u0000", "a\rb", "é", "\u00ff", " ", ""),
);

describe("socket fuzz: every request is answered, never 5xx, in the protocol's format", () => {
  const runs = runsFor(0.08);
  it(`URLs, header sizes and header bytes over TCP (${runs} cases)`, { timeout: timeoutFor(runs * 3) }, async () => {
    const arbitrary = fc.tuple(
      fc.constantFrom("scim", "admin") as fc.Arbitrary<"scim" | "admin">,
      fc.constantFrom("GET", "POST", "PATCH", "DELETE"),
      fc.oneof(
        hostileString.map(rawEncode),
        fc.constantFrom("%", "%zz", "%00", "a".repeat(101), "a".repeat(17_000), "Users?x=%", "Users/../Groups"),
      ),
      fc.array(fc.tuple(fc.constantFrom("x-fuzz", "accept", "content-type", "user-agent"), headerValue), {
        maxLength: 3,
      }),
    );
    await check("socket", arbitrary, runs, async ([protocol, method, tail, headers]) => {
      const base = protocol === "scim" ? `/scim/${c.clientId}/v2/` : "/v2alpha1/admin/";
      const auth = protocol === "scim" ? `Bearer ${c.secret}` : adminHeaders.authorization;
      const lines = [`${method} ${base}${tail} HTTP/1.1`, "host: 127.0.0.1", `authorization: ${auth}`];
      for (const [name, value] of headers) lines.push(`${name}: ${value}`);
      const body = method === "GET" ? "" : '{"displayName":"x"}';
      lines.push(`content-length: ${Buffer.byteLength(body)}`, "connection: close", "", body);
      const answer = await rawRequest(port, Buffer.from(lines.join("\r\n"), "latin1"));
      countStatus(answer.status);
      expectAnswer(answer, protocol, lines[0] ?? "");
    });
    const ready = await rawRequest(
      port,
      Buffer.from("GET /health/ready HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"),
    );
    expect(ready.status).toBe(200);
  });
});
