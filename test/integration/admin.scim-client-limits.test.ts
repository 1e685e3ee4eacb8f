import { describe, expect, it } from "vitest";
import { adminCall, clientIn } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * Declarations as large as the limits allow stay cheap to serve: /Schemas of such a client is bounded, and an
 * organization with 26 of them lists its clients in pages of a few MB, next_page_token continuing exactly (26 clients
 * of 10 × 100 × 100 attributes made this list answer 500 "Invalid string length" after 10 s at 1.4 GB).
 */
const { t } = useTestApp();
const MAX_PAGE_BYTES = 4 * 1024 * 1024;

/** 5 extensions × 50 attributes with 1 000-character descriptions: just under 256 KiB of JSON, the byte limit. */
const largest = Array.from({ length: 5 }, (_, i) => ({
  schema: `urn:example:large:${i}:User`,
  name: `Large${i}`,
  attributes: Array.from({ length: 50 }, (_, j) => ({ name: `a${j}`, description: "d".repeat(1000) })),
}));

describe("clients with the largest declarations", () => {
  it("/Schemas of one is bounded", async () => {
    const org = (await adminCall(t, "POST", "/organizations", { name: "Large" })).json().id;
    expect(Buffer.byteLength(JSON.stringify(largest))).toBeLessThan(256 * 1024);
    const c = await clientIn(t, org, { extensions: largest });
    const schemas = await t.request({ method: "GET", url: `${c.base}/Schemas`, headers: c.headers });
    expect(schemas.statusCode).toBe(200);
    expect(schemas.json().totalResults).toBe(3 + largest.length);
    expect(schemas.rawPayload.length).toBeLessThan(512 * 1024);
  });

  it("26 of them in one organization are listed in pages of a few MB, each client once, in order", async () => {
    const org = (await adminCall(t, "POST", "/organizations", { name: "Many" })).json().id;
    const created: string[] = [];
    for (let i = 0; i < 26; i++) {
      const res = await adminCall(t, "POST", "/scimClients", {
        organization_id: org,
        client_id: `large-${String(i).padStart(2, "0")}`,
        extensions: largest,
      });
      expect(res.statusCode, res.body.slice(0, 200)).toBe(201);
      created.push(res.json().client_id);
    }
    const listed: string[] = [];
    const sizes: number[] = [];
    let token = "";
    do {
      const page = await adminCall(t, "GET", `/scimClients?organization_id=${org}&page_size=1000&page_token=${token}`);
      expect(page.statusCode, page.body.slice(0, 200)).toBe(200);
      sizes.push(page.rawPayload.length);
      listed.push(...page.json().scim_clients.map((c: { client_id: string }) => c.client_id));
      token = page.json().next_page_token;
    } while (token !== "" && sizes.length < 30);
    expect(listed).toEqual(created);
    expect(sizes.length).toBeGreaterThan(1);
    for (const size of sizes) expect(size).toBeLessThanOrEqual(MAX_PAGE_BYTES + 512 * 1024);
    // A page size smaller than the byte budget still counts: 10 per page.
    const small = await adminCall(t, "GET", `/scimClients?organization_id=${org}&page_size=10`);
    expect(small.json().scim_clients).toHaveLength(10);
    expect(small.json().next_page_token).not.toBe("");
  });
});
