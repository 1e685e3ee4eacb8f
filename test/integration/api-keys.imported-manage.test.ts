import { beforeAll, describe, expect, it } from "vitest";
import { createIssuedKey, rawKey, verifyKey } from "../helpers/api-keys.js";
import { adminCall } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

const { t } = useTestApp();
let org: string;
let ids: string[];
beforeAll(async () => {
  org = (await adminCall(t, "POST", "/organizations", { name: "imports" })).json().id;
  const res = await adminCall(t, "POST", "/importedApiKeys:batchCreate", {
    requests: [0, 1, 2].map((i) => ({
      raw_key: rawKey(`m-${i}`),
      name: `k${i}`,
      actor_id: i === 1 ? "bob" : "ann",
      organization_id: org,
    })),
  });
  ids = res.json().results.map((r: { imported_api_key: { key_id: string } }) => r.imported_api_key.key_id);
});

describe("GET and DELETE /importedApiKeys", () => {
  it("gets one by key_id", async () => {
    const res = await adminCall(t, "GET", `/importedApiKeys/${ids[0]}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ key_id: ids[0], name: "k0", actor_id: "ann", organization_id: org });
    expect(res.json()).not.toHaveProperty("raw_key");
    expect(res.json()).not.toHaveProperty("prefix");
  });

  it("lists with filters and paging", async () => {
    const all = await adminCall(t, "GET", `/importedApiKeys?organization_id=${org}&page_size=2`);
    expect(all.json().imported_api_keys).toHaveLength(2);
    const next = await adminCall(
      t,
      "GET",
      `/importedApiKeys?organization_id=${org}&page_size=2&page_token=${all.json().next_page_token}`,
    );
    expect(next.json().imported_api_keys).toHaveLength(1);
    expect(next.json().next_page_token).toBe("");
    const bob = await adminCall(t, "GET", "/importedApiKeys?actor_id=bob");
    expect(bob.json().imported_api_keys.map((k: { key_id: string }) => k.key_id)).toEqual([ids[1]]);
  });

  it("keeps issued and imported keys apart", async () => {
    const issued = await createIssuedKey(t, { organization_id: org });
    expect((await adminCall(t, "GET", `/importedApiKeys/${issued.key_id}`)).statusCode).toBe(404);
    expect((await adminCall(t, "GET", `/issuedApiKeys/${ids[0]}`)).statusCode).toBe(404);
    const listed = await adminCall(t, "GET", `/importedApiKeys?organization_id=${org}`);
    expect(listed.body).not.toContain(issued.key_id as string);
  });

  it("DELETE revokes: verification says REVOKED, the key stays readable", async () => {
    const res = await adminCall(t, "DELETE", `/importedApiKeys/${ids[2]}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ state: "REVOKED", revoke_time: t.clock.now().toISOString() });
    expect(await verifyKey(t, rawKey("m-2"))).toEqual({
      valid: false,
      reason: "REVOKED",
      key_id: ids[2],
      revoke_reason: "ADMIN",
    });
    expect((await adminCall(t, "GET", `/importedApiKeys/${ids[2]}`)).json().state).toBe("REVOKED");
    const listed = await adminCall(t, "GET", `/importedApiKeys?organization_id=${org}`);
    expect(listed.body).not.toContain(ids[2] as string);
  });

  it("a revoked raw key cannot be imported again (409)", async () => {
    const res = await adminCall(t, "POST", "/importedApiKeys:batchCreate", {
      requests: [{ raw_key: rawKey("m-2"), name: "again", actor_id: "ann" }],
    });
    expect(res.statusCode).toBe(409);
  });

  it("unknown key → 404", async () => {
    expect((await adminCall(t, "GET", "/importedApiKeys/01900000-0000-7000-8000-000000000000")).statusCode).toBe(404);
    expect((await adminCall(t, "DELETE", "/importedApiKeys/01900000-0000-7000-8000-000000000000")).statusCode).toBe(
      404,
    );
  });
});
