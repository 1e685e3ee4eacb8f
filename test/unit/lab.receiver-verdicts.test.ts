import { describe, expect, it } from "vitest";
import { type IncomingWebhook, classify } from "../../deploy/lab/receiver.js";
import { signatureHeader, standardSignature, standardWebhookKey } from "../../src/webhooks/signing.js";

const SECRET = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
const OTHER = `whsec_${Buffer.alloc(32, 9).toString("base64")}`;
const PATH = "/hook/failover";
const secrets = new Map([[PATH, SECRET]]);
const ID = "0194f1c2-0000-7000-8000-000000000001";

/** A delivery signed as Roster's sender signs it (both schemes), with parts replaceable per case. */
function delivery(
  over: { body?: string; secret?: string; serviceSecret?: string; id?: string; method?: string; path?: string } = {},
  drop?: string,
): IncomingWebhook {
  const now = Date.now();
  const body = over.body ?? JSON.stringify({ id: ID, event: "user.created", data: { id: "u1" } });
  const headers: Record<string, string> = {
    "webhook-id": over.id ?? ID,
    "webhook-timestamp": String(Math.floor(now / 1000)),
    "webhook-signature": standardSignature(
      standardWebhookKey(over.secret ?? SECRET),
      over.id ?? ID,
      Math.floor(now / 1000),
      body,
    ),
    "service-signature": signatureHeader(over.serviceSecret ?? over.secret ?? SECRET, now, body),
  };
  if (drop !== undefined) delete headers[drop];
  return { method: over.method ?? "POST", path: over.path ?? PATH, headers, body: Buffer.from(body) };
}

describe("the lab receiver's verdict on a request", () => {
  it("accepts a delivery whose two signatures verify", () => {
    const verdict = classify(delivery(), secrets);
    expect(verdict.kind).toBe("delivery");
    expect(verdict.kind === "delivery" && verdict.body.event).toBe("user.created");
  });

  it.each([
    ["another path", delivery({ path: "/hook/nobody" })],
    ["another method", delivery({ method: "GET" })],
    ["no webhook-id", delivery({}, "webhook-id")],
    ["no webhook-signature", delivery({}, "webhook-signature")],
    ["no Service-Signature", delivery({}, "service-signature")],
  ])("ignores a request with %s", (_, request) => {
    expect(classify(request, secrets).kind).toBe("ignored");
  });

  it.each([
    ["signed with another secret", delivery({ secret: OTHER })],
    ["only Service-Signature signed with another secret", delivery({ serviceSecret: OTHER })],
    [
      "a body changed after signing",
      { ...delivery(), body: Buffer.from(JSON.stringify({ id: ID, event: "user.deleted", data: { id: "u1" } })) },
    ],
    ["a signed body that is not JSON", delivery({ body: "not json" })],
    ["a signed body that is not an event", delivery({ body: JSON.stringify({ id: ID }) })],
    [
      "a body id other than its webhook-id",
      delivery({ body: JSON.stringify({ id: "other", event: "user.created", data: { id: "u1" } }) }),
    ],
  ])("refuses a delivery with %s", (_, request) => {
    expect(classify(request, secrets).kind).toBe("bad signature");
  });

  it("refuses a Service-Signature timestamp outside the tolerance", () => {
    expect(classify(delivery(), secrets, Date.now() + 10 * 60 * 1000).kind).toBe("bad signature");
  });
});
