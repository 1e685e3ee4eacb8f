import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createObservability, type Observability } from "../../src/observability/index.js";
import { ManualClock } from "../../src/platform/clock.js";
import { createLogger } from "../../src/platform/logger.js";
import { ADMIN_TOKEN, createTestApp, createTestDatabase, type TestApp } from "../helpers/app.js";
import { type Browser, checkPage, servePortal } from "../helpers/browser.js";
import { idpBody } from "../helpers/idp-fixtures.js";
import { TEST_SECRETS } from "../helpers/webhooks.js";

/**
 * A setup link in Chromium against a real Roster on a real port: the customer's IT admin opens the link the
 * application created, connects Okta, and watches the first request arrive, with no admin token and no way to the
 * rest of the portal; an expired link's page. Every page is checked with axe and for sideways scrolling at 1280 and
 * 390 px.
 */
let t: TestApp;
let browser: Browser;
let obs: Observability;
let clock: ManualClock;
let origin = "";
const RETURN_URL = "https://app.example.com/settings/directory";

beforeAll(async () => {
  const database = await createTestDatabase();
  clock = new ManualClock(Date.parse("2026-11-23T10:00:00Z"));
  // The test holds the request log's writer, to flush it before reading the log.
  obs = createObservability({ db: database.db, clock, logger: createLogger("silent") });
  t = await createTestApp({
    database,
    clock,
    secrets: TEST_SECRETS,
    extra: { observability: obs, publicUrl: () => origin },
  });
  ({ origin, browser } = await servePortal(t.app, { clipboard: true }));
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
  await t?.database.close();
});

async function admin<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${origin}/v2alpha1/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  expect(res.status, `${method} ${path}: ${text}`).toBeLessThan(300);
  return JSON.parse(text) as T;
}

async function check(page: Page, name: string): Promise<void> {
  await checkPage(browser, page, name);
}

/** What the copy button put on the clipboard. */
async function copy(page: Page, label: string): Promise<string> {
  await page.getByRole("button", { name: `Copy ${label}`, exact: true }).click();
  await expect
    .poll(() => page.getByRole("button", { name: `Copy ${label}`, exact: true }).textContent())
    .toBe("Copied");
  return (await page.evaluate("navigator.clipboard.readText()")) as string;
}

async function scim(base: string, secret: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/scim+json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.text() };
}

/** The admin portal's navigation, which a setup link's view must not offer. */
const ADMIN_ONLY = ["Organizations", "API keys", "Admin tokens", "Settings", "Webhook events", "Data mapping"];

async function offersNoAdminPage(page: Page): Promise<void> {
  for (const name of ADMIN_ONLY) {
    expect(await page.getByRole("link", { name, exact: true }).count(), `a link to ${name}`).toBe(0);
  }
  expect(await page.getByRole("button", { name: "Sign out" }).count()).toBe(0);
}

describe("a setup link in Chromium", () => {
  it("lets a customer's IT admin connect Okta and see its first request arrive, at 1280 and 390 px", async () => {
    const org = await admin<{ id: string }>("POST", "/organizations", { name: "Acme Corp" });
    const link = await admin<{ url: string }>("POST", "/setupLinks", {
      organization_id: org.id,
      intent: "directory_sync",
      return_url: RETURN_URL,
    });
    const page = await browser.page(1280);

    // The token is exchanged for the session cookie and leaves the address bar.
    await page.goto(link.url);
    await page.getByRole("heading", { name: "Connect Acme Corp's identity provider" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/portal/setup");
    expect(page.url()).not.toContain("rsl_");
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    expect(await page.getByRole("link", { name: "Done" }).getAttribute("href")).toBe(RETURN_URL);
    await page.getByText("0 of at most 10 connections.").waitFor();
    await offersNoAdminPage(page);
    await check(page, "setup-link-start");

    // An Okta connection, created with the session's CSRF token, opens on Okta's guide.
    await page.getByLabel("Identity provider").selectOption("okta");
    await page.getByRole("button", { name: "Create connection" }).click();
    await page.getByRole("heading", { name: "Set up Okta" }).waitFor();
    expect(new URL(page.url()).pathname).toMatch(/^\/portal\/setup\/connections\/[^/]+$/);
    await page.getByRole("status").getByText("Waiting for the first request").waitFor();
    const baseUrl = await copy(page, "SCIM connector base URL");
    const secret = await copy(page, "Authorization (Bearer)");
    expect(baseUrl).toMatch(new RegExp(`^${origin}/scim/[^/]+/v2$`));
    expect(secret.length).toBeGreaterThan(20);
    expect(page.url()).not.toContain(secret);
    await offersNoAdminPage(page);
    await check(page, "setup-link-okta");

    // Okta's first push, with what was copied; then a duplicate, which the request log keeps with its error.
    const user = { ...idpBody("okta-create-user"), userName: "ada@acme.example", externalId: "okta-ada" };
    expect((await scim(baseUrl, secret, "POST", "/Users", user)).status).toBe(201);
    expect((await scim(baseUrl, secret, "POST", "/Users", user)).status).toBe(409);
    await obs.writer.flush();
    // Activation is recorded just after the answer: ask again until the page shows it.
    const connected = page.getByRole("status").filter({ hasText: "Your identity provider is connected" });
    await expect
      .poll(
        async () => {
          const again = page.getByRole("button", { name: "Check again" });
          if ((await again.count()) > 0) await again.click();
          return connected.count();
        },
        { timeout: 15_000, interval: 200 },
      )
      .toBe(1);
    expect(await connected.getByText("Connected", { exact: true }).count()).toBe(1);
    await check(page, "setup-link-connected");

    // The request log: the refused duplicate with both redacted bodies.
    await page.getByRole("link", { name: "SCIM requests" }).click();
    await page.getByRole("button", { name: /POST \/Users/ }).click();
    const detail = page.getByRole("complementary", { name: "Request detail" });
    await detail.getByRole("heading", { name: "POST 409" }).waitFor();
    expect(await detail.textContent()).toContain("uniqueness");
    await check(page, "setup-link-requests");

    // A rotation with a grace period: the new secret is shown once and both work for now.
    await page.getByRole("link", { name: "Setup guide" }).click();
    await page.getByRole("button", { name: "Rotate secret" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Rotate secret" }).click();
    await expect.poll(() => page.getByText("Previous secret accepted until").count()).toBe(1);
    const rotated = await page.getByLabel("Authorization (Bearer)", { exact: true }).inputValue();
    expect(rotated).not.toBe(secret);
    expect((await scim(baseUrl, rotated, "GET", "/Users?count=1")).status).toBe(200);
    expect((await scim(baseUrl, secret, "GET", "/Users?count=1")).status).toBe(200);

    // Back at the start: the connection as connected, and a count and a sample of what Okta pushed.
    await page.getByRole("link", { name: "Connections", exact: true }).click();
    await page.getByRole("heading", { name: "Users: 1" }).waitFor();
    await page.getByRole("cell", { name: "ada@acme.example" }).waitFor();
    await page.getByRole("heading", { name: "Groups: 0" }).waitFor();
    const row = page.getByRole("list", { name: "Connections" }).getByRole("listitem");
    expect(await row.textContent()).toContain("Connected");
    expect(await row.getByRole("link", { name: "Okta" }).count()).toBe(1);
    await offersNoAdminPage(page);
    await check(page, "setup-link-done");

    // The same pages at 390 px, in the same session.
    const guide = await row.getByRole("link", { name: "Okta" }).getAttribute("href");
    const narrow = await browser.page(390, 844);
    for (const [path, name] of [
      ["/portal/setup", "setup-link-done"],
      [guide, "setup-link-connected"],
      [`${guide}/requests`, "setup-link-requests"],
    ]) {
      await narrow.goto(`${origin}${path}`);
      await narrow.getByRole("heading", { level: 1 }).waitFor();
      await offersNoAdminPage(narrow);
      await check(narrow, name ?? "");
    }
    await narrow.close();
  }, 120_000);

  it("answers an expired link with a page that says whom to ask", async () => {
    const org = await admin<{ id: string }>("POST", "/organizations", { name: "Globex" });
    const expire = new Date(clock.now().getTime() + 3_600_000).toISOString();
    const link = await admin<{ url: string }>("POST", "/setupLinks", {
      organization_id: org.id,
      intent: "directory_sync",
      expire_time: expire,
    });
    clock.advance(2 * 3_600_000);
    for (const width of [1280, 390]) {
      const page = await browser.page(width);
      const res = await page.goto(link.url);
      expect(res?.status()).toBe(410);
      await page.getByRole("heading", { name: "This setup link has expired" }).waitFor();
      expect(await page.textContent("main")).toContain("Ask the person who sent you this link");
      await check(page, "setup-link-expired");
      await page.close();
    }
    // Nothing failed in the browser but the expired link's two openings.
    expect(browser.problems.filter((p) => !p.startsWith("410 GET /portal/setup/rsl_"))).toEqual([]);
  }, 60_000);
});
