import { describe, expect, it } from "vitest";
import { idpBody } from "../helpers/idp-fixtures.js";
import { useTestApp } from "../helpers/suite.js";
import { adminCall, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";

const PASSWORD = "t1meMa$heen";

const o = useTestApp({ observed: true });

async function createUser(c: SeededClient, userName: string): Promise<string> {
  const res = await scim(o.t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

async function logOf(c: SeededClient, query = ""): Promise<Array<Record<string, unknown>>> {
  await o.obs.writer.flush();
  const res = await adminCall(o.t, "GET", `/scimClients/${c.clientId}/requests${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().requests;
}

describe("the SCIM request log", () => {
  it("records an IdP's failing PATCH with both bodies, the password redacted", async () => {
    const c = await seedClient(o.t);
    const id = await createUser(c, "patch.fail@example.com");
    o.t.clock.advance(5);
    const body = idpBody("okta-patch-password") as { Operations: unknown[] };
    body.Operations.push({ op: "replace", path: "userName", value: 42 });
    const res = await o.t.request({
      method: "PATCH",
      url: `${c.base}/Users/${id}`,
      headers: { ...c.headers, "user-agent": "Okta SCIM Client 1.0.0" },
      payload: JSON.stringify(body),
    });
    expect(res.statusCode).toBe(400);

    const entries = await logOf(c);
    // `errors` is the default: the successful create is not kept.
    expect(entries).toHaveLength(1);
    const entry = entries[0] ?? {};
    expect(entry).toMatchObject({
      method: "PATCH",
      path: `${c.base}/Users/${id}`,
      status: 400,
      resource_id: id,
      client_id: c.clientId,
      organization_id: c.organizationId,
      user_agent: "Okta SCIM Client 1.0.0",
      scim_type: res.json().scimType ?? null,
    });
    expect(entry.request_body).toBeUndefined();

    const one = await adminCall(o.t, "GET", `/scimClients/${c.clientId}/requests/${String(entry.id)}`);
    expect(one.statusCode, one.body).toBe(200);
    const detail = one.json();
    expect(detail.request_body.Operations[0].value.password).toBe("[redacted]");
    expect(detail.request_body.Operations[1]).toEqual({ op: "replace", path: "userName", value: 42 });
    expect(detail.response_body).toEqual(res.json());
    expect(detail.request_truncated).toBe(false);
    expect(one.body).not.toContain(PASSWORD);
    expect(one.body).not.toContain(c.secret);
  });

  it("redacts a password set through a PATCH path, and secret query parameters", async () => {
    const c = await seedClient(o.t, { request_log: "all" });
    const id = await createUser(c, "path.password@example.com");
    const patch = await scim(o.t, c, "PATCH", `/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "password", value: "Pa55-path-secret" }],
    });
    expect(patch.statusCode, patch.body).toBe(200);
    const list = await scim(o.t, c, "GET", "/Users?count=1&access_token=tok-query-secret");
    expect(list.statusCode).toBe(200);

    const entries = await logOf(c);
    const all = JSON.stringify(
      await Promise.all(
        entries.map(async (e) =>
          (await adminCall(o.t, "GET", `/scimClients/${c.clientId}/requests/${String(e.id)}`)).json(),
        ),
      ),
    );
    expect(all).not.toContain("Pa55-path-secret");
    expect(all).not.toContain("tok-query-secret");
    const get = entries.find((e) => e.method === "GET");
    expect(get?.path).toBe(`${c.base}/Users`);
    expect(get?.query).toBe("count=1&access_token=[redacted]");
  });

  it("keeps errors only, everything, or nothing, as the connection's request_log says", async () => {
    const errors = await seedClient(o.t);
    const all = await seedClient(o.t, { request_log: "all" });
    const off = await seedClient(o.t, { request_log: "off" });
    for (const c of [errors, all, off]) {
      expect((await scim(o.t, c, "GET", "/Users")).statusCode).toBe(200);
      expect((await scim(o.t, c, "GET", "/ServiceProviderConfig")).statusCode).toBe(200);
      expect((await scim(o.t, c, "GET", "/Users/00000000-0000-4000-8000-000000000000")).statusCode).toBe(404);
    }
    expect((await logOf(errors)).map((e) => e.status)).toEqual([404]);
    expect((await logOf(all)).map((e) => e.status).sort()).toEqual([200, 200, 404]);
    expect(await logOf(off)).toEqual([]);

    // Switched with an update mask: from now on `off` keeps everything.
    const patched = await adminCall(o.t, "PATCH", `/scimClients/${off.clientId}?update_mask=request_log`, {
      request_log: "all",
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().request_log).toBe("all");
    expect((await scim(o.t, off, "GET", "/Users")).statusCode).toBe(200);
    expect((await logOf(off)).map((e) => e.status)).toEqual([200]);
  });

  it("refuses an unknown request_log mode in the admin error format", async () => {
    const c = await seedClient(o.t);
    const res = await adminCall(o.t, "PATCH", `/scimClients/${c.clientId}?update_mask=request_log`, {
      request_log: "everything",
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.status).toBe("INVALID_ARGUMENT");
    const created = await adminCall(o.t, "POST", "/scimClients", {
      organization_id: c.organizationId,
      request_log: 3,
    });
    expect(created.statusCode).toBe(400);
  });

  it("files a rejected secret under its client, without the secret", async () => {
    const c = await seedClient(o.t);
    const res = await o.t.request({
      method: "GET",
      url: `${c.base}/Users`,
      headers: { authorization: "Bearer wrong-secret-value-123" },
    });
    expect(res.statusCode).toBe(401);
    // The client is looked up after the answer: poll until the entry arrives.
    let entries: Array<Record<string, unknown>> = [];
    const deadline = Date.now() + 5_000;
    while (entries.length === 0 && Date.now() < deadline) entries = await logOf(c);
    expect(entries.map((e) => e.status)).toEqual([401]);
    const detail = await adminCall(o.t, "GET", `/scimClients/${c.clientId}/requests/${String(entries[0]?.id)}`);
    expect(detail.body).not.toContain("wrong-secret-value-123");
  });

  it("lists newest first in pages, filtered by status, method and resource id", async () => {
    const c = await seedClient(o.t, { request_log: "all" });
    const id = await createUser(c, "pages@example.com");
    // An entry's time is when its request arrived (the clock at the answer less the time taken): steps of a second
    // keep the order whatever the requests took.
    for (let i = 0; i < 3; i++) {
      o.t.clock.advance(1000);
      await scim(o.t, c, "GET", `/Users/${id}`);
    }
    o.t.clock.advance(1000);
    await scim(o.t, c, "DELETE", "/Users/00000000-0000-4000-8000-000000000000");

    await o.obs.writer.flush();
    const page1 = await adminCall(o.t, "GET", `/scimClients/${c.clientId}/requests?page_size=2`);
    expect(page1.statusCode).toBe(200);
    const p1 = page1.json();
    expect(p1.requests.map((e: { method: string }) => e.method)).toEqual(["DELETE", "GET"]);
    const page2 = await adminCall(
      o.t,
      "GET",
      `/scimClients/${c.clientId}/requests?page_size=2&page_token=${p1.next_page_token}`,
    );
    const p2 = page2.json();
    expect(p2.requests.map((e: { method: string }) => e.method)).toEqual(["GET", "GET"]);
    const times = [...p1.requests, ...p2.requests].map((e: { time: string }) => Date.parse(e.time));
    expect(times).toEqual([...times].sort((a, b) => b - a));

    expect((await logOf(c, "?status=4xx")).map((e) => e.status)).toEqual([404]);
    expect((await logOf(c, "?status=201")).map((e) => e.method)).toEqual(["POST"]);
    expect((await logOf(c, "?method=post")).map((e) => e.resource_id)).toEqual([id]);
    expect(await logOf(c, `?resource_id=${id}`)).toHaveLength(4);
    const bad = await adminCall(o.t, "GET", `/scimClients/${c.clientId}/requests?status=4x`);
    expect(bad.statusCode).toBe(400);
    const unknown = await adminCall(o.t, "GET", "/scimClients/no-such-client/requests");
    expect(unknown.statusCode).toBe(404);
  });

  it("shows a connection's health: last request, requests and errors of the last 24 hours, whatever request_log says", async () => {
    const c = await seedClient(o.t, { request_log: "off" });
    const before = await adminCall(o.t, "GET", `/scimClients/${c.clientId}`);
    expect(before.json()).toMatchObject({ last_request_time: null, request_count_24h: 0, error_count_24h: 0 });
    await scim(o.t, c, "GET", "/Users");
    await scim(o.t, c, "GET", "/Users/nope");
    await o.obs.writer.flush();
    const after = (await adminCall(o.t, "GET", `/scimClients/${c.clientId}`)).json();
    expect(after).toMatchObject({ request_count_24h: 2, error_count_24h: 1 });
    expect(Date.parse(after.last_request_time)).toBeLessThanOrEqual(o.t.clock.now().getTime());
    o.t.clock.advance(26 * 3600_000);
    const later = (await adminCall(o.t, "GET", `/scimClients/${c.clientId}`)).json();
    expect(later).toMatchObject({
      request_count_24h: 0,
      error_count_24h: 0,
      last_request_time: after.last_request_time,
    });
  });

  it("drops the days past the retention", async () => {
    const c = await seedClient(o.t, { request_log: "all" });
    await scim(o.t, c, "GET", "/Users");
    expect(await logOf(c)).toHaveLength(1);
    o.t.clock.advance(8 * 24 * 3600_000);
    await scim(o.t, c, "GET", "/Groups");
    await o.obs.writer.flush();
    const pruned = await o.obs.writer.prune();
    expect(pruned.partitions).toBeGreaterThanOrEqual(1);
    expect((await logOf(c)).map((e) => e.path)).toEqual([`${c.base}/Groups`]);
  });
});
