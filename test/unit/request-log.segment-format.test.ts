import { brotliDecompressSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import {
  decodeBodies,
  decodeSegment,
  decodeSummaries,
  encodeSegment,
  type RequestLogEntry,
} from "../../src/storage/request-log-segments.js";

const base: RequestLogEntry = {
  id: "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a50",
  client_id: "okta-prod",
  organization_id: "0190c000-0000-7000-8000-0000000000aa",
  time: new Date(Date.UTC(2026, 10, 25, 12, 0, 0, 123)),
  method: "PATCH",
  path: "/scim/okta-prod/v2/Users/u1",
  query: "",
  status: 400,
  scim_type: "invalidValue",
  duration_ms: 3.25,
  resource_id: "u1",
  request_body: '{"Operations":[{"op":"replace","path":"password","value":"[redacted]"}]}',
  request_truncated: false,
  response_body: '{"detail":"a \\"quoted\\" word"}',
  response_truncated: false,
  user_agent: "Okta SCIM Client 1.0.0",
};

const entries: RequestLogEntry[] = [
  base,
  {
    ...base,
    id: "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a51",
    method: "GET",
    status: 200,
    scim_type: null,
    resource_id: null,
    request_body: null,
    response_body: "Zoë 李 🙂 and a NUL: \u0000",
    response_truncated: true,
    user_agent: null,
  },
  {
    ...base,
    id: "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a52",
    method: "POST",
    status: 201,
    scim_type: null,
    request_body: "x".repeat(70_000),
    response_body: "",
  },
];

describe("a request log segment's stored form", () => {
  it("gives back every entry exactly, bodies included, oldest first", async () => {
    expect(await decodeSegment(await encodeSegment(entries))).toEqual(entries);
  });

  it("reads the fields without the bodies, and one entry's bodies alone", async () => {
    const segment = await encodeSegment(entries);
    const summaries = await decodeSummaries(segment);
    expect(summaries.map((s) => s.id)).toEqual(entries.map((e) => e.id));
    expect(summaries[1]).not.toHaveProperty("response_body");
    expect(summaries[1]?.response_truncated).toBe(true);
    for (const [i, e] of entries.entries()) {
      expect(await decodeBodies(segment.bodies, i)).toEqual({ request: e.request_body, response: e.response_body });
    }
  });

  it("says what the segment holds: id range, count, distinct statuses, methods and resources", async () => {
    const segment = await encodeSegment([entries[2], entries[0], entries[1]] as RequestLogEntry[]);
    expect(segment).toMatchObject({
      client_id: "okta-prod",
      organization_id: base.organization_id,
      first_id: entries[0]?.id,
      last_id: entries[2]?.id,
      entry_count: 3,
    });
    expect([...segment.statuses].sort()).toEqual([200, 201, 400]);
    expect([...segment.methods].sort()).toEqual(["GET", "PATCH", "POST"]);
    expect(segment.resource_ids).toEqual(["u1"]);
  });

  it("compresses both values, the bodies length-prefixed UTF-8 (null: -1)", async () => {
    const segment = await encodeSegment([entries[1] as RequestLogEntry]);
    const bodies = brotliDecompressSync(segment.bodies);
    const response = Buffer.from(entries[1]?.response_body ?? "", "utf8");
    expect(bodies.readInt32BE(0)).toBe(-1);
    expect(bodies.readInt32BE(4)).toBe(response.length);
    expect(bodies.subarray(8).equals(response)).toBe(true);
    const alike = Array.from({ length: 200 }, (_v, i) => ({ ...base, id: `${base.id.slice(0, -3)}${i + 100}` }));
    const big = await encodeSegment(alike);
    expect(big.bodies.length * 10).toBeLessThan(200 * ((base.request_body?.length ?? 0) + 31));
  });

  it("refuses an empty segment and entries of two clients", async () => {
    await expect(encodeSegment([])).rejects.toThrow("at least one entry");
    await expect(encodeSegment([base, { ...base, client_id: "other" }])).rejects.toThrow("of one client");
  });
});
