import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/platform/clock.js";
import { verifyWebhookSignature } from "../../src/webhooks/verify.js";
import type { Webhooks } from "../../src/webhooks/index.js";
import { ADMIN_TOKEN, createTestApp, createTestDatabase, type TestApp } from "../helpers/app.js";
import { type Browser, checkPage, servePortal } from "../helpers/browser.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";
import { TEST_SECRETS, testWebhooks } from "../helpers/webhooks.js";

/**
 * The admin portal's setup links in Chromium against a real Roster on a real port: an operator creates a link with
 * the application's webhook and a generated secret, the customer's IT admin opens it and connects Okta, and the
 * application's endpoint receives the connection's connection.created, signed with that secret. Every page is checked
 * with axe and for sideways scrolling at 1280 and 390 px.
 */
let t: TestApp;
let webhooks: Webhooks;
let receiver: WebhookReceiver;
let browser: Browser;
let origin = "";

beforeAll(async () => {
  const database = await createTestDatabase();
  const clock = new ManualClock(Date.parse("2026-11-23T10:00:00Z"));
  webhooks = testWebhooks(database.db, clock);
  receiver = await startWebhookReceiver("all");
  t = await createTestApp({ database, clock, secrets: TEST_SECRETS, extra: { webhooks, publicUrl: () => origin } });
  ({ origin, browser } = await servePortal(t.app, { clipboard: true }));
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
  await t?.database.close();
  await receiver?.close();
});

async function check(page: Page, name: string): Promise<void> {
  await checkPage(browser, page, name);
}

async function signIn(page: Page, path: string): Promise<void> {
  await page.goto(`${origin}/portal/sign-in?next=${encodeURIComponent(path)}`);
  await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Setup links" }).waitFor();
}

describe("setup links in the admin portal", () => {
  it("creates a link with the application's webhook, whose connection delivers connection.created signed", async () => {
    const org = await fetch(`${origin}/v2alpha1/admin/organizations`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Initech" }),
    }).then((r) => r.json() as Promise<{ id: string }>);
    const tab = `/organizations/${org.id}/setup-links`;
    const page = await browser.page(1280);
    await signIn(page, tab);
    await page.getByText("No setup links yet").waitFor();
    await check(page, "setup-links-empty");

    // A webhook URL the outbound guard refuses is said so under the form, and no link is made.
    const form = page.getByRole("form", { name: "Create a setup link" });
    await form.getByLabel("Webhook URL").fill("http://10.20.30.40/hook");
    await form.getByRole("button", { name: "Generate webhook secret" }).click();
    await form.getByRole("button", { name: "Create setup link" }).click();
    await expect.poll(() => form.getByRole("alert").textContent()).toContain("webhook.url is refused");
    expect(await page.getByRole("list", { name: "Setup links" }).getByRole("listitem").count()).toBe(0);

    // The application's endpoint, a generated secret: the link and the secret are shown once.
    await form.getByLabel("Webhook URL").fill(receiver.url);
    await form.getByRole("button", { name: "Generate webhook secret" }).click();
    const generated = await form.getByLabel("Webhook secret").inputValue();
    expect(generated).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await form.getByRole("button", { name: "Create setup link" }).click();
    const linkUrl = await page.getByLabel("Setup link", { exact: true }).inputValue();
    expect(linkUrl).toMatch(new RegExp(`^${origin}/portal/setup/rsl_`));
    expect(await page.getByLabel("Webhook secret", { exact: true }).last().inputValue()).toBe(generated);
    expect(await form.getByLabel("Webhook secret").inputValue()).toBe("");
    const row = page.getByRole("list", { name: "Setup links" }).getByRole("listitem");
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.textContent()).toContain(`Webhook: ${receiver.url}`);
    expect(await row.textContent()).toContain("active");
    await check(page, "setup-links-created");

    // The customer's IT admin opens the link and connects Okta.
    const customer = await browser.page(1280);
    await customer.goto(linkUrl);
    await customer.getByLabel("Identity provider").selectOption("okta");
    await customer.getByRole("button", { name: "Create connection" }).click();
    await customer.getByRole("heading", { name: "Set up Okta" }).waitFor();
    const clientId = decodeURIComponent(new URL(customer.url()).pathname.split("/").at(-1) ?? "");
    await customer.close();

    // The application's endpoint gets the connection's connection.created, signed with the generated secret.
    await webhooks.dispatcher.drain();
    const created = receiver.received.filter((r) => r.json.directory_id === clientId);
    expect(created.map((r) => r.json.event)).toEqual(["connection.created"]);
    const header = String(created[0]?.headers["service-signature"]);
    expect(verifyWebhookSignature(generated, header, created[0]?.rawBody ?? "", { now: t.clock.now() })).toBe(true);

    // The same tab at 390 px (the admin token lives in this tab's session storage), then the link revoked.
    await page.setViewportSize({ width: 390, height: 844 });
    await check(page, "setup-links-created");
    await page.setViewportSize({ width: 1280, height: 900 });
    await row.getByRole("button", { name: /^Revoke the link/ }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Revoke link" }).click();
    await expect.poll(() => row.textContent()).toContain("revoked");
    expect(await row.getByRole("button").count()).toBe(0);
    expect((await fetch(linkUrl, { redirect: "manual" })).status).toBe(410);
    expect(browser.problems.filter((p) => !p.startsWith("400 POST /v2alpha1/admin/setupLinks"))).toEqual([]);
  }, 120_000);
});
