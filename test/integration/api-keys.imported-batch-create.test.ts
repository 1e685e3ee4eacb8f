import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { createIssuedKey, rawKey, verifyKey } from "../helpers/api-keys.js";
import { adminCall } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

const { t } = useTestApp();

const batch = (requests: unknown) => adminCall(t, "POST", "/importedApiKeys:batchCreate", { requests });
const item = (seed: string | number, extra: Record<string, unknown> = {}) => ({
  raw_key: rawKey(seed),
  name: `imported ${seed}`,
  actor_id: `actor-${seed}`,
  ...extra,
});

describe("POST /importedApiKeys:batchCreate", () => {
  it("imports every item: 200, results in request order, counts", async () => {
    const res = await batch([
      item("ok-1", { scopes: ["read"], metadata: { source: "unkey" }, expire_time: "2031-01-01T00:00:00Z" }),
      item("ok-2"),
    ]);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.success_count).toBe(2);
    expect(body.failure_count).toBe(0);
    expect(body.results).toEqual([
      {
        index: 0,
        imported_api_key: {
          key_id: expect.any(String),
          name: "imported ok-1",
          organization_id: null,
          actor_id: "actor-ok-1",
          scopes: ["read"],
          metadata: { source: "unkey" },
          rate_limits: [],
          expire_time: "2031-01-01T00:00:00.000Z",
          state: "ACTIVE",
          revoke_time: null,
          revoke_reason: null,
          create_time: t.clock.now().toISOString(),
          update_time: t.clock.now().toISOString(),
        },
      },
      { index: 1, imported_api_key: expect.objectContaining({ name: "imported ok-2" }) },
    ]);
    expect(await verifyKey(t, rawKey("ok-1"))).toMatchObject({
      valid: true,
      kind: "imported",
      key_id: body.results[0].imported_api_key.key_id,
      actor_id: "actor-ok-1",
      scopes: ["read"],
      metadata: { source: "unkey" },
    });
  });

  it("partial failure: 200, each item carries its own result, in request order", async () => {
    await batch([item("existing")]);
    const res = await batch([
      item("p-new-1"),
      item("existing"),
      { name: "no key", actor_id: "a" },
      item("p-new-2"),
      { ...item("short"), raw_key: "too-short" },
      item("p-new-1"),
      item("p-no-actor", { actor_id: undefined }),
      "not an object",
    ]);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.results.map((r: { index: number }) => r.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const codes = body.results.map((r: { error?: { code: string } }) => r.error?.code ?? "OK");
    expect(codes).toEqual([
      "OK",
      "ALREADY_EXISTS",
      "INVALID_ARGUMENT",
      "OK",
      "INVALID_ARGUMENT",
      "ALREADY_EXISTS",
      "INVALID_ARGUMENT",
      "INVALID_ARGUMENT",
    ]);
    expect(body.results[5].error.message).toContain("requests[0]");
    expect(body.success_count).toBe(2);
    expect(body.failure_count).toBe(6);
    // Only the successes exist.
    expect((await verifyKey(t, rawKey("p-new-2"))).valid).toBe(true);
    expect((await verifyKey(t, rawKey("p-no-actor"))).valid).toBe(false);
  });

  it("a raw key twice in one batch: the first is imported, the repeat is ALREADY_EXISTS", async () => {
    const res = await batch([item("twice"), item("twice", { name: "second" })]);
    expect(res.statusCode).toBe(200);
    expect(res.json().results[0].imported_api_key.name).toBe("imported twice");
    expect(res.json().results[1].error).toEqual({
      code: "ALREADY_EXISTS",
      message: "raw_key repeats the one of requests[0]",
    });
  });

  it("a raw key equal to an issued secret is ALREADY_EXISTS (one digest space)", async () => {
    const issued = await createIssuedKey(t);
    const res = await batch([{ raw_key: issued.secret, name: "clash", actor_id: "a" }]);
    expect(res.statusCode).toBe(409);
    expect((await verifyKey(t, issued.secret as string)).kind).toBe("issued");
  });

  it("all failed, all duplicates → 409 ALREADY_EXISTS with per-item results in details", async () => {
    await batch([item("dup-a"), item("dup-b")]);
    const res = await batch([item("dup-a"), item("dup-b"), item("dup-a")]);
    expect(res.statusCode).toBe(409);
    const { error } = res.json();
    expect(error).toMatchObject({ code: 409, status: "ALREADY_EXISTS" });
    expect(error.details).toEqual([
      {
        "@type": "BatchCreateImportedApiKeysResponse",
        results: [
          { index: 0, error: { code: "ALREADY_EXISTS", message: expect.any(String) } },
          { index: 1, error: { code: "ALREADY_EXISTS", message: expect.any(String) } },
          { index: 2, error: { code: "ALREADY_EXISTS", message: expect.any(String) } },
        ],
        success_count: 0,
        failure_count: 3,
      },
    ]);
  });

  it("all failed with any non-duplicate failure → 400 INVALID_ARGUMENT with per-item results", async () => {
    await batch([item("dup-c")]);
    const res = await batch([item("dup-c"), { raw_key: "", name: "x", actor_id: "y" }]);
    expect(res.statusCode).toBe(400);
    const { error } = res.json();
    expect(error.status).toBe("INVALID_ARGUMENT");
    expect(error.details[0].results.map((r: { error: { code: string } }) => r.error.code)).toEqual([
      "ALREADY_EXISTS",
      "INVALID_ARGUMENT",
    ]);
  });

  it("1001 items → 400 for the whole request, nothing imported", async () => {
    const requests = Array.from({ length: 1001 }, (_, i) => item(`over-${i}`));
    const res = await batch(requests);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.status).toBe("INVALID_ARGUMENT");
    expect(res.json().error.message).toContain("1000");
    expect((await verifyKey(t, rawKey("over-0"))).valid).toBe(false);
  });

  it("1000 items → 200, all imported", async () => {
    const requests = Array.from({ length: 1000 }, (_, i) => item(`full-${i}`));
    const res = await batch(requests);
    expect(res.statusCode).toBe(200);
    expect(res.json().success_count).toBe(1000);
    expect((await verifyKey(t, rawKey("full-999"))).valid).toBe(true);
  });

  it.each([
    ["an empty requests array", { requests: [] }],
    ["requests not an array", { requests: { raw_key: "x" } }],
    ["no requests", {}],
  ])("%s → 400", async (_name, body) => {
    const res = await adminCall(t, "POST", "/importedApiKeys:batchCreate", body);
    expect(res.statusCode).toBe(400);
  });

  it("refuses an unknown organization per item", async () => {
    const org = (await adminCall(t, "POST", "/organizations", { name: "imp" })).json().id;
    const res = await batch([
      item("org-ok", { organization_id: org }),
      item("org-missing", { organization_id: "01900000-0000-7000-8000-000000000000" }),
    ]);
    expect(res.statusCode).toBe(200);
    expect(res.json().results[0].imported_api_key.organization_id).toBe(org);
    expect(res.json().results[1].error.code).toBe("INVALID_ARGUMENT");
  });

  it("never echoes a raw key, in results or errors, and stores only its SHA-256", async () => {
    const secretish = rawKey("never-echo");
    const res = await batch([
      { raw_key: secretish, name: "n", actor_id: "a" },
      { raw_key: secretish, name: "n", actor_id: "a" },
      { raw_key: `${secretish}x`, name: 5, actor_id: "a" },
    ]);
    expect(res.body).not.toContain("never-echo");
    const list = await adminCall(t, "GET", "/importedApiKeys?page_size=1000");
    expect(list.body).not.toContain("never-echo");
    const dump = await sql<{ d: string }>`
      select coalesce(string_agg(row_to_json(k)::text, ''), '') as d from api_keys k
    `.execute(t.db);
    expect(dump.rows[0]?.d).not.toContain("never-echo");
  });
});
