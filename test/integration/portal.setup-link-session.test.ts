import { describe, expect, it } from "vitest";
import { FEED_WAIT } from "../helpers/events.js";
import { adminCall, clientIn, seedClient } from "../helpers/seed.js";
import { asSession, openSetupLink, setupLinkFor } from "../helpers/setup-links.js";
import { useTestApp } from "../helpers/suite.js";

const { t } = useTestApp();

async function newOrg(name = "Customer"): Promise<string> {
  const res = await adminCall(t, "POST", "/organizations", { name });
  return res.json().id as string;
}

describe("setup links in the admin API", () => {
  it("creates a link shown once, lists it without the token, and revokes it", async () => {
    const org = await newOrg();
    const link = await setupLinkFor(t, org);
    expect(link.url).toMatch(/\/portal\/setup\/rsl_[A-Za-z0-9_-]{40,}$/);
    expect(link.state).toBe("ACTIVE");
    const defaultEnd = t.clock.now().getTime() + 7 * 86_400_000;
    expect(Date.parse(link.expire_time)).toBe(defaultEnd);
    const listed = await adminCall(t, "GET", `/setupLinks?organization_id=${org}`);
    expect(listed.json().setup_links).toHaveLength(1);
    expect(listed.body).not.toContain("rsl_");
    expect((await adminCall(t, "DELETE", `/setupLinks/${link.id}`)).statusCode).toBe(200);
    expect((await adminCall(t, "GET", `/setupLinks/${link.id}`)).json().state).toBe("REVOKED");
  });

  it("refuses an expiry past 30 days, in the past, an unknown intent and an unknown organization", async () => {
    const org = await newOrg();
    const far = new Date(t.clock.now().getTime() + 31 * 86_400_000).toISOString();
    const past = new Date(t.clock.now().getTime() - 1000).toISOString();
    for (const body of [
      { organization_id: org, intent: "directory_sync", expire_time: far },
      { organization_id: org, intent: "directory_sync", expire_time: past },
      { organization_id: org, intent: "sso" },
    ]) {
      expect((await adminCall(t, "POST", "/setupLinks", body)).statusCode, JSON.stringify(body)).toBe(400);
    }
    const missing = await adminCall(t, "POST", "/setupLinks", {
      organization_id: "00000000-0000-7000-8000-000000000000",
      intent: "directory_sync",
    });
    expect(missing.statusCode).toBe(404);
  });
});

describe("opening a link", () => {
  it("exchanges the token for a strict, HttpOnly session cookie and leaves the token out of the address bar", async () => {
    const org = await newOrg("Acme");
    const { res, setCookie, session } = await openSetupLink(t, (await setupLinkFor(t, org)).url);
    expect(res.headers.location).toBe("/portal/setup");
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    expect(res.headers["cache-control"]).toBe("no-store");
    expect(session).toMatchObject({ organization_id: org, organization_name: "Acme" });
  });

  it("answers 410 with a page that says whom to ask, for an expired or revoked link", async () => {
    const org = await newOrg();
    const revoked = await setupLinkFor(t, org);
    await adminCall(t, "DELETE", `/setupLinks/${revoked.id}`);
    const gone = await t.request({ method: "GET", url: new URL(revoked.url).pathname });
    expect(gone.statusCode).toBe(410);
    expect(gone.body).toContain("was revoked");
    expect(gone.body).toContain("Ask the person who sent you this link");

    const soon = await setupLinkFor(t, org, { expire_time: new Date(t.clock.now().getTime() + 60_000).toISOString() });
    const { cookie } = await openSetupLink(t, soon.url);
    t.clock.advance(60_000);
    expect((await t.request({ method: "GET", url: new URL(soon.url).pathname })).statusCode).toBe(410);
    // The session ends with its link.
    const after = await t.request({ method: "GET", url: "/v2alpha1/admin/scimClients", headers: asSession(cookie) });
    expect(after.statusCode).toBe(401);
  });
});

describe("what a session may do", () => {
  it("creates, reads and rotates its organization's connections, and sees their requests and users", async () => {
    const org = await newOrg();
    const { cookie, csrf } = await openSetupLink(t, (await setupLinkFor(t, org)).url);
    const created = await t.request({
      method: "POST",
      url: "/v2alpha1/admin/scimClients",
      headers: { ...asSession(cookie, csrf), "content-type": "application/json" },
      payload: { organization_id: org, name: "Okta" },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { client_id, secret } = created.json();
    expect(typeof secret).toBe("string");
    const list = await t.request({ method: "GET", url: "/v2alpha1/admin/scimClients", headers: asSession(cookie) });
    expect(list.json().scim_clients.map((c: { client_id: string }) => c.client_id)).toEqual([client_id]);
    const rotated = await t.request({
      method: "POST",
      url: `/v2alpha1/admin/scimClients/${client_id}:rotateSecret`,
      headers: { ...asSession(cookie, csrf), "content-type": "application/json" },
      payload: { grace_period: "3600s" },
    });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const users = await t.request({
      method: "GET",
      url: `/v2alpha1/admin/organizations/${org}/users`,
      headers: asSession(cookie),
    });
    expect(users.statusCode, users.body).toBe(200);
    const requests = await t.request({
      method: "GET",
      url: `/v2alpha1/admin/scimClients/${client_id}/requests`,
      headers: asSession(cookie),
    });
    expect(requests.statusCode, requests.body).toBe(200);
    // The audit trail names the link as the actor.
    const audit = (
      await adminCall(t, "GET", `/auditLog?target=${encodeURIComponent(`scimClients/${client_id}`)}`)
    ).json();
    expect(JSON.stringify(audit)).toContain("setup-link:");
  });

  it("refuses writes without the CSRF token", async () => {
    const org = await newOrg();
    const { cookie } = await openSetupLink(t, (await setupLinkFor(t, org)).url);
    const res = await t.request({
      method: "POST",
      url: "/v2alpha1/admin/scimClients",
      headers: { ...asSession(cookie, "forged"), "content-type": "application/json" },
      payload: { organization_id: org, name: "x" },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.status).toBe("PERMISSION_DENIED");
  });

  it("is refused on every other admin route (403) and on another organization's connections (404)", async () => {
    const org = await newOrg();
    const other = await seedClient(t);
    const { cookie, csrf } = await openSetupLink(t, (await setupLinkFor(t, org)).url);
    const h = asSession(cookie, csrf);
    const forbidden: [string, string][] = [
      ["GET", "/v2alpha1/admin/organizations"],
      ["GET", `/v2alpha1/admin/organizations/${org}`],
      ["GET", "/v2alpha1/admin/issuedApiKeys"],
      ["GET", "/v2alpha1/admin/adminTokens"],
      ["GET", "/v2alpha1/admin/setupLinks"],
      ["GET", "/v2alpha1/admin/auditLog"],
      ["GET", `/v2alpha1/admin/events?organization_id=${org}`],
      ["GET", `/v2alpha1/admin/scimClients/${other.clientId}/webhookEvents`],
      ["POST", `/v2alpha1/admin/scimClients/${other.clientId}:generateWebhookSecret`],
      ["DELETE", `/v2alpha1/admin/scimClients/${other.clientId}`],
      ["POST", "/v2alpha1/admin/setupLinks"],
    ];
    for (const [method, url] of forbidden) {
      const res = await t.request({ method: method as "GET", url, headers: h });
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json().error.status).toBe("PERMISSION_DENIED");
    }
    for (const url of [
      `/v2alpha1/admin/scimClients/${other.clientId}`,
      `/v2alpha1/admin/scimClients/${other.clientId}/requests`,
      `/v2alpha1/admin/organizations/${other.organizationId}/users`,
    ]) {
      const res = await t.request({ method: "GET", url, headers: h });
      expect(res.statusCode, url).toBe(404);
    }
    const foreignList = await t.request({
      method: "GET",
      url: `/v2alpha1/admin/scimClients?organization_id=${other.organizationId}`,
      headers: h,
    });
    expect(foreignList.statusCode).toBe(404);
    // A connection may not be given a webhook or a mapping through the link.
    const mine = await clientIn(t, org);
    const patched = await t.request({
      method: "PATCH",
      url: `/v2alpha1/admin/scimClients/${mine.clientId}?update_mask=webhook.url`,
      headers: { ...h, "content-type": "application/json" },
      payload: { webhook: { url: "https://example.com/hook" } },
    });
    expect(patched.statusCode).toBe(403);
  });
});

describe("connection events", () => {
  it("records connection.created, connection.activated at the first success, and connection.deleted", async () => {
    const c = await seedClient(t);
    const activatedTime = async () =>
      (await adminCall(t, "GET", `/scimClients/${c.clientId}`)).json().activated_time as string | null;
    expect(await activatedTime()).toBeNull();
    const ok = await t.request({ method: "GET", url: `${c.base}/Users`, headers: c.headers });
    expect(ok.statusCode).toBe(200);
    // The activation is recorded after the answer, off the request's path.
    const kinds = async (query: string) =>
      (
        (await adminCall(t, "GET", `/events?organization_id=${c.organizationId}&event=${query}`)).json().events as {
          event: string;
        }[]
      ).map((e) => e.event);
    await expect.poll(() => kinds("connection.activated"), FEED_WAIT).toEqual(["connection.activated"]);
    // The connection says so too, for a view that shows it as connected.
    expect(Date.parse((await activatedTime()) ?? "")).toBe(t.clock.now().getTime());
    await t.request({ method: "GET", url: `${c.base}/Users`, headers: c.headers });
    expect((await adminCall(t, "DELETE", `/scimClients/${c.clientId}`)).statusCode).toBe(200);
    const connectionEvents = async () => {
      const feed = await adminCall(
        t,
        "GET",
        `/events?organization_id=${c.organizationId}&event=connection.created,connection.activated,connection.deleted`,
      );
      const events = feed.json().events as { event: string; data: { id: string; state: string } }[];
      return events.map((e) => [e.event, e.data.id, e.data.state]);
    };
    // The feed hands out an event once every older transaction of the cluster has ended: poll, bounded.
    await expect.poll(connectionEvents, FEED_WAIT).toEqual([
      ["connection.created", c.clientId, "inactive"],
      ["connection.activated", c.clientId, "active"],
      ["connection.deleted", c.clientId, "deleted"],
    ]);
    // A reader that names no kinds gets every kind, these included.
    const plain = (await adminCall(t, "GET", `/events?organization_id=${c.organizationId}`)).json();
    expect(plain.events.map((e: { event: string }) => e.event)).toEqual([
      "connection.created",
      "connection.activated",
      "connection.deleted",
    ]);
  });
});
