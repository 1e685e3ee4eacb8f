import { beforeAll, describe, expect, it } from "vitest";
import { adminCall } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

const SECRET = "whsec_never_shown_0123456789";
const { t } = useTestApp();
let organizationId: string;

beforeAll(async () => {
  organizationId = (await adminCall(t, "POST", "/organizations", { name: "Acme" })).json().id;
});

const create = (body: Record<string, unknown>) =>
  adminCall(t, "POST", "/scimClients", { organization_id: organizationId, ...body });
const patch = (clientId: string, mask: string, body: Record<string, unknown>) =>
  adminCall(t, "PATCH", `/scimClients/${clientId}?update_mask=${mask}`, body);
const sealedOf = async (clientId: string) =>
  (
    await t.db
      .selectFrom("scim_clients")
      .select("webhook_secret_sealed")
      .where("client_id", "=", clientId)
      .executeTakeFirstOrThrow()
  ).webhook_secret_sealed;

describe("webhook configuration of a SCIM client", () => {
  it("is set at creation; the secret is stored encrypted and never returned, only secret_set", async () => {
    const res = await create({
      tenant: "acme",
      product: "crm",
      webhook: { url: "https://hooks.example.com/roster", secret: SECRET },
      log_webhook_events: true,
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      tenant: "acme",
      product: "crm",
      webhook: { url: "https://hooks.example.com/roster", secret_set: true, retry: "none" },
      log_webhook_events: true,
    });
    expect(res.body).not.toContain(SECRET);
    const clientId = res.json().client_id as string;
    const sealed = await sealedOf(clientId);
    expect(sealed).not.toBeNull();
    expect(sealed).not.toContain(SECRET);

    const got = await adminCall(t, "GET", `/scimClients/${clientId}`);
    expect(got.json().webhook).toEqual({ url: "https://hooks.example.com/roster", secret_set: true, retry: "none" });
    expect(got.body).not.toContain(SECRET);
    const listed = await adminCall(t, "GET", `/scimClients?organization_id=${organizationId}`);
    expect(listed.body).not.toContain(SECRET);
  });

  it("changes at any time with update_mask, one field or the whole webhook", async () => {
    const clientId = (await create({})).json().client_id as string;
    let res = await patch(clientId, "webhook.url", { webhook: { url: "http://127.0.0.1:9/hook" } });
    expect(res.json().webhook).toEqual({ url: "http://127.0.0.1:9/hook", secret_set: false, retry: "none" });

    res = await patch(clientId, "webhook.secret", { webhook: { secret: SECRET } });
    expect(res.json().webhook).toEqual({ url: "http://127.0.0.1:9/hook", secret_set: true, retry: "none" });
    expect(res.body).not.toContain(SECRET);
    const firstSeal = await sealedOf(clientId);

    res = await patch(clientId, "webhook.secret", { webhook: { secret: "rotated-secret-0123456" } });
    expect(await sealedOf(clientId)).not.toBe(firstSeal);

    res = await patch(clientId, "tenant,product,log_webhook_events", {
      tenant: "t2",
      product: "p2",
      log_webhook_events: true,
    });
    expect(res.json()).toMatchObject({ tenant: "t2", product: "p2", log_webhook_events: true });

    res = await patch(clientId, "webhook", {
      webhook: { url: "https://new.example.com/h", secret: "whsec_second_0123456" },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().webhook).toEqual({ url: "https://new.example.com/h", secret_set: true, retry: "none" });

    // Replacing the whole webhook without a secret clears it (AIP-161).
    res = await patch(clientId, "webhook", { webhook: { url: "https://new.example.com/h" } });
    expect(res.json().webhook).toEqual({ url: "https://new.example.com/h", secret_set: false, retry: "none" });

    res = await patch(clientId, "webhook", {});
    expect(res.json().webhook).toBeNull();
    expect(await sealedOf(clientId)).toBeNull();
  });

  it("clearing the URL clears the secret too", async () => {
    const clientId = (await create({ webhook: { url: "https://a.example.com/", secret: SECRET } })).json().client_id;
    const res = await patch(clientId, "webhook.url", {});
    expect(res.json().webhook).toBeNull();
    expect(await sealedOf(clientId)).toBeNull();
  });

  it("treats an empty secret as no secret", async () => {
    const res = await create({ webhook: { url: "https://a.example.com/", secret: "" } });
    expect(res.json().webhook).toEqual({ url: "https://a.example.com/", secret_set: false, retry: "none" });
  });

  it.each([
    ["ftp URL", { webhook: { url: "ftp://files.example.com/x" } }],
    ["javascript URL", { webhook: { url: "javascript:alert(1)" } }],
    ["relative URL", { webhook: { url: "/hook" } }],
    ["URL with credentials", { webhook: { url: "https://user:pw@example.com/hook" } }],
    ["secret without URL", { webhook: { secret: SECRET } }],
    ["non-string URL", { webhook: { url: 42 } }],
    ["non-object webhook", { webhook: "https://example.com" }],
  ])("rejects a %s at creation (400)", async (_name, body) => {
    const res = await create(body);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.status).toBe("INVALID_ARGUMENT");
    expect(res.body).not.toContain(SECRET);
  });

  it.each([
    ["webhook.url", { webhook: { url: "gopher://example.com/" } }],
    ["webhook", { webhook: { url: "file:///etc/passwd" } }],
    ["webhook", { webhook: { secret: SECRET } }],
    ["log_webhook_events", { log_webhook_events: "yes" }],
  ])("rejects PATCH %s with an invalid value (400)", async (mask, body) => {
    const clientId = (await create({})).json().client_id;
    const res = await patch(clientId, mask, body);
    expect(res.statusCode).toBe(400);
  });

  it("rejects a secret for a client without a URL (400)", async () => {
    const clientId = (await create({})).json().client_id;
    const res = await patch(clientId, "webhook.secret", { webhook: { secret: SECRET } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(/webhook.url/);
  });
});
