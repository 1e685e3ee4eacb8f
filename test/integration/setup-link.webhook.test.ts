import { Webhook } from "standardwebhooks";
import { beforeAll, describe, expect, it } from "vitest";
import { PRODUCT, TENANT, USER_SCHEMA, WEBHOOK_SECRET } from "../helpers/constants.js";
import { FEED_WAIT } from "../helpers/events.js";
import { activated, adminCall, clientIn, type SeededClient, scim } from "../helpers/seed.js";
import { asSession, connectThroughLink, openSetupLink, setupLinkFor } from "../helpers/setup-links.js";
import { useTestApp } from "../helpers/suite.js";
import { type Delivery, kinds } from "../helpers/webhook-receiver.js";

/**
 * A setup link that carries the application's webhook (docs/setup-links.md, "Your webhook"): the connection the
 * customer's IT admin creates with it delivers its connection.created, connection.activated and directory events
 * there, signed; without one it starts with the organization's webhook when its connections share one.
 */
const { t, receiver } = useTestApp({ receiver: true });

beforeAll(async () => {
  receiver.knows("all");
  await t.deliver();
});

const of = (c: SeededClient, ds: readonly Delivery[]) => ds.filter((d) => d.body.directory_id === c.clientId);
const newOrg = async () => (await adminCall(t, "POST", "/organizations", { name: "Customer" })).json().id as string;

/** A connection the IT admin creates through a fresh link of the organization with these fields. */
async function connectedThrough(org: string, link: Record<string, unknown>) {
  const created = await setupLinkFor(t, org, link);
  const session = await openSetupLink(t, created.url);
  return { link: created, session, ...(await connectThroughLink(t, org, session)) };
}

async function feedKinds(c: SeededClient): Promise<string[]> {
  const feed = await adminCall(t, "GET", `/events?organization_id=${c.organizationId}&directory_id=${c.clientId}`);
  return (feed.json().events as { event: string }[]).map((e) => e.event);
}

describe("a setup link with a webhook", () => {
  it("gives its connection the webhook: connection.created signed, then connection.activated, then its directory", async () => {
    const org = await newOrg();
    const url = `${receiver.url}?via=link`;
    const { link, res, client, session } = await connectedThrough(org, {
      webhook: { url, secret: WEBHOOK_SECRET, retry: "backoff" },
      tenant: "link-tenant",
      product: "link-product",
    });
    // The IT admin's answers carry neither the secret nor the application's webhook settings.
    const one = await t.request({
      url: `/v2alpha1/admin/scimClients/${client.clientId}`,
      headers: asSession(session.cookie),
    });
    const list = await t.request({ url: "/v2alpha1/admin/scimClients", headers: asSession(session.cookie) });
    for (const answer of [res, one, list]) {
      expect(answer.statusCode, answer.body).toBeLessThan(300);
      for (const hidden of [WEBHOOK_SECRET, "/hook?via=link", "link-tenant", "link-product"]) {
        expect(answer.body).not.toContain(hidden);
      }
    }
    for (const field of ["webhook", "tenant", "product", "mapping", "extensions", "unknown_extensions"]) {
      expect(Object.keys(one.json())).not.toContain(field);
      expect(Object.keys(list.json().scim_clients[0])).not.toContain(field);
    }
    expect(list.json().scim_clients[0]).toMatchObject({ client_id: client.clientId, name: "Okta" });
    const stored = (await adminCall(t, "GET", `/scimClients/${client.clientId}`)).json();
    expect(stored).toMatchObject({
      webhook: { url, secret_set: true, retry: "backoff" },
      tenant: "link-tenant",
      product: "link-product",
    });

    const first = of(client, await t.deliver());
    expect(kinds(first)).toEqual(["connection.created"]);
    expect(first[0]?.received.path).toBe("/hook?via=link");
    expect(first[0]?.body).toMatchObject({ tenant: "link-tenant", product: "link-product" });
    expect(first[0]?.body.data).toMatchObject({ id: client.clientId, organization_id: org, state: "inactive" });
    // Signed with the link's secret: Service-Signature (checked by t.deliver) and Standard Webhooks both verify.
    const std = new Webhook(new TextEncoder().encode(WEBHOOK_SECRET), { format: "raw" });
    const headers = Object.fromEntries(Object.entries(first[0]?.received.headers ?? {}).map(([k, v]) => [k, `${v}`]));
    expect(std.verify(first[0]?.received.rawBody ?? "", headers)).toMatchObject({ event: "connection.created" });

    const user = await scim(t, client, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "ada@customer.example" });
    expect(user.statusCode, user.body).toBe(201);
    await activated(t, client);
    const next = of(client, await t.deliver());
    expect(kinds(next).sort()).toEqual(["connection.activated", "user.created"]);
    expect(next.find((d) => d.event === "connection.activated")?.body.data).toMatchObject({ state: "active" });
    expect(link.state).toBe("ACTIVE");
  });

  it("shows the link's webhook as its URL and retry only, and keeps the secret out of every answer and the audit trail", async () => {
    const org = await newOrg();
    const created = await adminCall(t, "POST", "/setupLinks", {
      organization_id: org,
      intent: "directory_sync",
      webhook: { url: receiver.url, secret: WEBHOOK_SECRET },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    const expected = { webhook: { url: receiver.url, retry: "none" }, tenant: "", product: "" };
    expect(created.json()).toMatchObject(expected);
    const one = await adminCall(t, "GET", `/setupLinks/${id}`);
    const list = await adminCall(t, "GET", `/setupLinks?organization_id=${org}`);
    expect(one.json()).toMatchObject(expected);
    expect(list.json().setup_links).toEqual([one.json()]);
    const audit = await adminCall(t, "GET", `/auditLog?target=${encodeURIComponent(`setupLinks/${id}`)}`);
    expect(audit.statusCode, audit.body).toBe(200);
    expect(audit.body).toContain("webhook.secret");
    for (const answer of [created, one, list, audit]) expect(answer.body).not.toContain(WEBHOOK_SECRET);
    // The link's form without a webhook is unchanged, and shows none.
    const plain = await setupLinkFor(t, org);
    expect(plain).toMatchObject({ webhook: null, tenant: "", product: "" });
  });

  it("is in the OpenAPI document: the request takes url, secret and retry; the answer shows no secret", async () => {
    const document = (await adminCall(t, "GET", "/openapi.json")).json();
    const post = document.paths["/v2alpha1/admin/setupLinks"].post;
    const body = post.requestBody.content["application/json"].schema.properties;
    expect(Object.keys(body.webhook.properties)).toEqual(["url", "secret", "retry"]);
    expect(Object.keys(body)).toEqual(expect.arrayContaining(["tenant", "product"]));
    const answer = post.responses["201"].content["application/json"].schema.properties;
    expect(Object.keys(answer.webhook.properties)).toEqual(["url", "retry"]);
  });

  it.each([
    ["a URL that is not http(s)", { url: "ftp://hooks.example.com/x", secret: WEBHOOK_SECRET }, "absolute http://"],
    ["a private address", { url: "http://10.20.30.40/hook", secret: WEBHOOK_SECRET }, "webhook.url is refused"],
    ["credentials in the URL", { url: "https://u:p@hooks.example.com/", secret: WEBHOOK_SECRET }, "credentials"],
    ["a short secret", { url: "https://hooks.example.com/", secret: "fifteen-chars-x" }, "at least 16"],
    ["no secret", { url: "https://hooks.example.com/" }, "webhook.secret is required"],
    ["a secret without a URL", { secret: WEBHOOK_SECRET }, "needs a webhook.url"],
  ])("refuses %s with 400 in the admin error body, and creates no link", async (_case, webhook, message) => {
    const org = await newOrg();
    const res = await adminCall(t, "POST", "/setupLinks", { organization_id: org, intent: "directory_sync", webhook });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
    expect(res.json().error.message).toContain(message);
    if ("secret" in webhook) expect(res.body).not.toContain(webhook.secret);
    expect((await adminCall(t, "GET", `/setupLinks?organization_id=${org}`)).json().setup_links).toEqual([]);
  });
});

describe("a setup link without a webhook", () => {
  it("gives its connection the organization's webhook when the organization's connections share one", async () => {
    const org = await newOrg();
    const url = `${receiver.url}?via=organization`;
    const first = await clientIn(t, org, {
      webhook: { url, secret: WEBHOOK_SECRET },
      tenant: TENANT,
      product: PRODUCT,
    });
    await clientIn(t, org, { webhook: { url, secret: WEBHOOK_SECRET }, tenant: TENANT, product: PRODUCT });
    await clientIn(t, org); // one without a webhook takes no part
    const { client } = await connectedThrough(org, { product: "from-the-link" });
    const stored = (await adminCall(t, "GET", `/scimClients/${client.clientId}`)).json();
    // The link's product, given, still applies; the rest is the organization's.
    expect(stored).toMatchObject({ webhook: { url, secret_set: true }, tenant: TENANT, product: "from-the-link" });
    const delivered = of(client, await t.deliver());
    expect(kinds(delivered)).toEqual(["connection.created"]);
    expect(delivered[0]?.received.path).toBe("/hook?via=organization");
    expect(of(first, await t.deliver())).toEqual([]);
  });

  it.each([
    ["none has a webhook", [{}]],
    ["they name two endpoints", [{ url: "?a" }, { url: "?b" }]],
    [
      "they label one endpoint twice",
      [
        { url: "", tenant: "one" },
        { url: "", tenant: "two" },
      ],
    ],
  ])("leaves its connection to the events feed when %s", async (_case, connections) => {
    const org = await newOrg();
    for (const c of connections as { url?: string; tenant?: string }[]) {
      const webhook =
        c.url === undefined ? {} : { webhook: { url: `${receiver.url}${c.url}`, secret: WEBHOOK_SECRET } };
      await clientIn(t, org, { ...webhook, tenant: c.tenant ?? "" });
    }
    const { client } = await connectedThrough(org, {});
    expect((await adminCall(t, "GET", `/scimClients/${client.clientId}`)).json().webhook).toBeNull();
    await expect.poll(() => feedKinds(client), FEED_WAIT).toEqual(["connection.created"]);
    expect(of(client, await t.deliver())).toEqual([]);
  });
});
