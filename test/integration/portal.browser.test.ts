import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createObservability, type Observability } from "../../src/observability/index.js";
import { ManualClock } from "../../src/platform/clock.js";
import { createLogger } from "../../src/platform/logger.js";
import type { Webhooks } from "../../src/webhooks/index.js";
import { ADMIN_TOKEN, createTestApp, createTestDatabase, type TestApp } from "../helpers/app.js";
import { type Browser, checkPage, servePortal } from "../helpers/browser.js";
import { idpBody } from "../helpers/idp-fixtures.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";
import { TEST_SECRETS, testWebhooks } from "../helpers/webhooks.js";

/**
 * The portal in Chromium against a real Roster on a real port: an operator's first day, from sign-in to a dry-run
 * of a data mapping, with an accessibility check and a no-sideways-scrolling check on every page.
 */
let t: TestApp;
let webhooks: Webhooks;
let receiver: WebhookReceiver;
let browser: Browser;
let obs: Observability;
let origin = "";
/** What the first walk created, for the second. */
const made = { clientId: "", orgId: "", secret: "", baseUrl: "", adaId: "" };

beforeAll(async () => {
  const database = await createTestDatabase();
  const clock = new ManualClock(Date.parse("2026-11-23T10:00:00Z"));
  // The test holds the request log's writer, to flush it before reading the log.
  obs = createObservability({ db: database.db, clock, logger: createLogger("silent") });
  webhooks = testWebhooks(database.db, clock, { wrapSender: obs.wrapSender });
  receiver = await startWebhookReceiver();
  t = await createTestApp({
    database,
    clock,
    secrets: TEST_SECRETS,
    extra: { webhooks, observability: obs, publicUrl: () => origin },
  });
  ({ origin, browser } = await servePortal(t.app));
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
  await t?.database.close();
  await receiver?.close();
});

/** Every page the walk visits, checked at both widths. */
const visited = new Map<string, string>();

async function check(page: Page, name: string): Promise<void> {
  await checkPage(browser, page, name);
  visited.set(name, new URL(page.url()).pathname);
}

async function scim(base: string, secret: string, method: string, path: string, body: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/scim+json" },
    body: JSON.stringify(body),
  });
  expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBeLessThan(300);
  // A group PATCH answers 204 with no body.
  return (res.status === 204 ? {} : await res.json()) as { id: string };
}

describe("admin portal in Chromium", () => {
  it("walks an operator through sign-in, a connection, SCIM sync, events, keys and the mapping at 1280 px", async () => {
    const page = await browser.page(1280);

    // /portal (no slash) lands on the sign-in page.
    await page.goto(`${origin}/portal`);
    await page.getByLabel("Admin token").waitFor();
    expect(new URL(page.url()).pathname).toBe("/portal/sign-in");
    await check(page, "sign-in");

    // A wrong token is refused, said so, and not kept.
    await page.getByLabel("Admin token").fill("not-the-admin-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("admin token is wrong");
    expect(await page.evaluate("sessionStorage.length")).toBe(0);

    await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Organizations" }).waitFor();
    await expect.poll(() => page.getByText("No organizations yet").isVisible()).toBe(true);
    await check(page, "organizations-empty");

    // An organization, then an Okta connection.
    await page.getByLabel("New organization name").fill("Acme Corp");
    await page.getByRole("button", { name: "Create organization" }).click();
    await page.getByRole("heading", { name: "Acme Corp" }).waitFor();
    made.orgId = new URL(page.url()).pathname.split("/").at(-1) ?? "";
    await check(page, "organization-connections-empty");
    await page.getByLabel("Identity provider").selectOption("okta");
    await page.getByLabel("Connection name").fill("Okta production");
    await page.getByRole("button", { name: "Create connection" }).click();
    await page.getByRole("heading", { name: "Set up Okta" }).waitFor();

    // The Okta guide's values, read off the page as an admin would copy them.
    const baseUrl = await page.getByLabel("SCIM connector base URL", { exact: true }).inputValue();
    const secret = await page.getByLabel("Authorization (Bearer)", { exact: true }).inputValue();
    expect(await page.getByLabel("Unique identifier field for users", { exact: true }).inputValue()).toBe("userName");
    expect(baseUrl).toMatch(new RegExp(`^${origin}/scim/[^/]+/v2$`));
    expect(secret.length).toBeGreaterThan(20);
    expect(page.url()).not.toContain(secret);
    // The app listens on plain HTTP on loopback: the guide says an IdP cannot use that URL, and what to set.
    const notice = page.getByRole("alert").filter({ hasText: "cannot use this SCIM base URL" });
    expect(await notice.textContent()).toMatch(/loopback.*plain HTTP.*ROSTER_PUBLIC_URL/s);
    await check(page, "connection-setup-okta");

    // Okta's Basic Auth: the guide offers it, the connection accepts it once asked, and the values it shows work.
    await page.getByLabel("Authentication", { exact: true }).selectOption("Basic Auth");
    await page.getByRole("button", { name: "Accept Basic Auth" }).click();
    await expect.poll(() => page.getByRole("button", { name: "Accept Basic Auth" }).count()).toBe(0);
    const basicUser = await page.getByLabel("Username", { exact: true }).inputValue();
    expect(await page.getByLabel("Password", { exact: true }).inputValue()).toBe(secret);
    const viaBasic = await fetch(`${baseUrl}/Users?count=1`, {
      headers: { authorization: `Basic ${Buffer.from(`${basicUser}:${secret}`).toString("base64")}` },
    });
    expect(viaBasic.status).toBe(200);
    await page.getByLabel("Authentication", { exact: true }).selectOption("");

    // Webhook to a local receiver, with a generated secret and delivery logging on.
    await page.getByRole("link", { name: "Settings" }).click();
    // No webhook URL yet: nothing to send a test event to.
    expect(await page.getByRole("button", { name: "Send test event" }).isDisabled()).toBe(true);
    await page.getByText("Save a webhook URL first.").waitFor();
    // A URL Roster refuses: the error shows under the field, and goes once a good URL is saved.
    await page.getByLabel("Webhook URL").fill("ftp://example.com/hook");
    await page.getByRole("button", { name: "Save webhook" }).click();
    await expect.poll(() => page.getByLabel("Webhook URL").getAttribute("aria-invalid")).toBe("true");
    await page.getByRole("alert").filter({ hasText: "webhook.url" }).waitFor();
    await page.getByLabel("Webhook URL").fill(receiver.url);
    await page.getByLabel(/Keep a log of every delivery attempt/).check();
    await page.getByRole("button", { name: "Save webhook" }).click();
    await expect.poll(() => page.getByRole("alert").filter({ hasText: "webhook.url" }).count()).toBe(0);
    await page.getByText("This webhook URL has no secret").waitFor();
    await page.getByRole("button", { name: "Save with a generated secret" }).click();
    // Generated by Roster (Standard Webhooks' form: whsec_ and 32 random bytes in base64).
    const webhookSecret = await page.getByLabel("Webhook secret", { exact: true }).inputValue();
    expect(webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await expect.poll(() => page.getByText("This webhook URL has no secret").count()).toBe(0);
    await check(page, "connection-settings");

    // Okta pushes two users and a group, as its reference describes.
    const ada = await scim(baseUrl, secret, "POST", "/Users", {
      ...idpBody("okta-create-user"),
      userName: "ada@acme.example",
      externalId: "okta-ada",
      emails: [{ primary: true, value: "ada@acme.example", type: "work" }],
      name: { givenName: "Ada", familyName: "Lovelace" },
    });
    const bob = await scim(baseUrl, secret, "POST", "/Users", {
      ...idpBody("okta-create-user"),
      userName: "bob@acme.example",
      externalId: "okta-bob",
      emails: [{ primary: true, value: "bob@acme.example", type: "work" }],
    });
    const group = await scim(baseUrl, secret, "POST", "/Groups", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName: "Engineering",
      members: [],
    });
    Object.assign(made, {
      secret,
      baseUrl,
      adaId: ada.id,
      clientId: decodeURIComponent(baseUrl.split("/").at(-2) ?? ""),
    });
    await scim(
      baseUrl,
      secret,
      "PATCH",
      `/Groups/${group.id}`,
      idpBody("okta-group-add-members", { user1: ada.id, user2: bob.id }),
    );
    // Enough further users for more than one page of events at 25 a page.
    for (let i = 0; i < 24; i++) {
      await scim(baseUrl, secret, "POST", "/Users", {
        ...idpBody("okta-create-user"),
        userName: `u${i}@acme.example`,
        externalId: `okta-u${i}`,
        emails: [],
      });
    }
    await webhooks.dispatcher.drain();
    expect(receiver.received.length).toBeGreaterThanOrEqual(28);

    // Find them in the directory browser.
    await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Acme Corp" }).click();
    await page.getByRole("link", { name: "Users" }).click();
    await page.getByRole("link", { name: "ada@acme.example" }).waitFor();
    await page.getByLabel("Attribute").selectOption("externalId");
    await page.getByLabel("equals").fill("okta-bob");
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => page.getByRole("link", { name: "ada@acme.example" }).count()).toBe(0);
    await page.getByRole("link", { name: "bob@acme.example" }).waitFor();
    await check(page, "directory-users");
    await page.getByRole("button", { name: "Clear" }).click();
    await page.getByRole("link", { name: "ada@acme.example" }).click();
    await page.getByRole("heading", { name: "Mapped traits" }).waitFor();
    await page.getByText('"first": "Ada"').waitFor();
    await page.getByRole("link", { name: "Engineering" }).waitFor();
    await check(page, "directory-user");
    await page.getByRole("link", { name: "Engineering" }).click();
    await page.getByRole("heading", { name: "Members" }).waitFor();
    await page.getByRole("link", { name: "bob@acme.example" }).waitFor();
    await check(page, "directory-group");
    await page.getByRole("link", { name: "Groups" }).click();
    await page.getByRole("cell", { name: "2" }).waitFor();
    await check(page, "directory-groups");

    // Open an event and resend it.
    await page.goto(
      `${origin}${new URL(baseUrl).pathname.replace(/^\/scim\/([^/]+)\/v2$/, "/portal/connections/$1/events")}`,
    );
    await page.getByLabel("Per page").selectOption("25");
    await page.getByText("Page 1").waitFor();
    await page.getByRole("button", { name: "Next" }).click();
    await page.getByText("Page 2").waitFor();
    await expect
      .poll(() => page.getByRole("list", { name: "Delivery attempts" }).getByRole("listitem").count())
      // 26 user.created, group.created and two group.user_added: 29 attempts.
      .toBe(4);
    await page.getByRole("button", { name: "Previous" }).click();
    await page.getByText("Page 1").waitFor();
    await page.getByRole("list", { name: "Delivery attempts" }).getByText("attempt 1").first().waitFor();
    // The events feed: every change, oldest first, whether delivered or not; filtered to memberships, then opened.
    await page.getByRole("link", { name: "events feed" }).first().click();
    await page.getByRole("heading", { name: "Events feed" }).waitFor();
    // The feed hands out an event once every transaction older than it has ended, on the whole PostgreSQL server
    // (other databases' included): on a shared server that can take a while, so the test asks again as a user would.
    const feedShows = async (text: string) => {
      await page.getByRole("button", { name: "Check for newer events" }).click();
      return page.getByRole("list", { name: "Feed events" }).getByText(text).count();
    };
    await expect.poll(() => feedShows("ada@acme.example"), { timeout: 90_000 }).toBeGreaterThan(0);
    await page.getByLabel("Event type").selectOption("group.user_added");
    await expect.poll(() => feedShows("Engineering"), { timeout: 90_000 }).toBe(2);
    await page.getByRole("button", { name: "group.user_added" }).first().click();
    const feedEvent = page.getByRole("complementary", { name: "Feed event" });
    await feedEvent.getByText('"name": "Engineering"').waitFor();
    await feedEvent.getByRole("link", { name: "open the user" }).waitFor();
    await check(page, "events-feed");
    await page.goBack();
    await page.getByRole("heading", { name: "Webhook events" }).waitFor();
    await page.getByLabel("Event type").selectOption("user.created");
    await page.getByRole("button", { name: "user.created" }).last().click();
    const detail = page.getByRole("complementary", { name: "Event detail" });
    await detail.getByRole("heading", { name: "Payload" }).waitFor();
    await detail.getByText('"event": "user.created"').waitFor();
    await check(page, "events");
    const before = receiver.received.length;
    await detail.getByRole("button", { name: "Resend this event" }).click();
    await detail.getByText("manual resend").waitFor();
    expect(receiver.received.length).toBe(before + 1);

    // Send a test event from the settings: it arrives signed, and the event log shows the headers it was sent with.
    await page.getByRole("link", { name: "Settings" }).click();
    await page.getByRole("button", { name: "Send test event" }).click();
    await page.getByText("Test event queued").waitFor();
    await webhooks.dispatcher.drain();
    const testEvent = receiver.received.at(-1);
    expect(testEvent?.json.event).toBe("webhook.test");
    await page.getByRole("link", { name: "Webhook events" }).click();
    await page.getByLabel("Event type").selectOption("webhook.test");
    await page.getByRole("button", { name: "webhook.test" }).first().click();
    const testDetail = page.getByRole("complementary", { name: "Event detail" });
    await testDetail.getByRole("heading", { name: "Request headers" }).waitFor();
    await testDetail.getByText(String(testEvent?.headers["webhook-signature"])).waitFor();
    await testDetail.getByText("Status 200").waitFor();
    await check(page, "event-test-headers");

    // Mapping: a syntax error inline, then a dry run on Okta's sample.
    await page.getByRole("link", { name: "Data mapping" }).click();
    const editor = page.getByLabel("JSONata expression");
    await editor.fill('{ "login": userName, ');
    await page.getByText(/^Line 1, column/).waitFor();
    await editor.fill('{ "login": $lowercase(userName), "mail": emails[primary].value }');
    await expect.poll(() => page.getByText(/^Line 1, column/).count()).toBe(0);
    await page.getByLabel("Sample payload").selectOption("okta");
    await page.getByRole("button", { name: "Run dry run" }).click();
    await page.getByText('"login": "test.user@okta.local"').waitFor();
    await page.getByRole("button", { name: "Save mapping" }).click();
    await page.getByText("Saved: new and updated users get these traits.").waitFor();
    await check(page, "mapping");

    // API keys: create (secret shown once), rotate with a grace period.
    await page.getByRole("link", { name: "API keys" }).click();
    await check(page, "api-keys-empty");
    await page.getByRole("button", { name: "Create an issued key" }).click();
    await page.getByLabel("Name").fill("billing worker");
    await page.getByLabel("Scopes").fill("invoices:read invoices:write");
    await page.getByLabel("Rate limits").fill("per_minute 100 60s");
    await page.getByRole("button", { name: "Create key" }).click();
    const first = await page.getByLabel("Secret of billing worker", { exact: true }).inputValue();
    expect(first).toMatch(/^rsk_[0-9a-f]{8}_/);
    await page.getByRole("button", { name: "Rotate billing worker" }).click();
    await page.getByLabel("The previous secret keeps working for").selectOption("3600");
    await page.getByRole("button", { name: "Rotate secret" }).click();
    await page.getByText(/Rotated; the previous secret verifies until/).waitFor();
    const second = await page.getByLabel("Secret of billing worker", { exact: true }).inputValue();
    expect(second).not.toBe(first);
    await check(page, "api-keys");
    await page.getByRole("link", { name: "Imported" }).click();
    await page
      .getByLabel("Keys to import")
      .fill("raw_key,name,actor_id\nsk_live_0123456789abcdef,legacy,user-1\nshort,bad,user-2");
    await page.getByRole("button", { name: "Import" }).click();
    await page.getByText("1 imported, 1 failed").waitFor();
    await check(page, "api-keys-imported");

    // Organizations: rename, then delete after a confirmation that says what goes with it.
    await page.getByRole("link", { name: "Organizations" }).first().click();
    await page.getByLabel("New organization name").fill("Globex");
    await page.getByRole("button", { name: "Create organization" }).click();
    await page.getByRole("heading", { name: "Globex" }).waitFor();
    await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Organizations" }).click();
    await page.getByRole("button", { name: "Rename Globex" }).click();
    await page.getByLabel("New name for Globex").fill("Globex Corporation");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByRole("link", { name: "Globex Corporation" }).waitFor();
    await page.getByLabel("Search organizations").fill("globex");
    await expect.poll(() => page.getByRole("link", { name: "Acme Corp" }).count()).toBe(0);
    await page.getByRole("button", { name: "Delete Globex Corporation" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete Globex Corporation?" });
    await dialog.getByText(/every user and group synced into it/).waitFor();
    await check(page, "organization-delete-dialog");
    await dialog.getByRole("button", { name: "Delete organization" }).click();
    await page.getByText("No organization matches “globex”").waitFor();

    // Nothing secret ever lands in localStorage; sign-out forgets the token.
    expect(await page.evaluate("localStorage.length")).toBe(0);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Admin token").waitFor();
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    // The wrong token and the refused webhook URL are the only refused requests: the CSP blocked nothing.
    expect(browser.problems).toEqual([
      "401 GET /v2alpha1/admin/organizations",
      expect.stringMatching(/^400 PATCH \/v2alpha1\/admin\/scimClients\//),
    ]);
    await page.close();
  }, 180_000);

  it("shows a connection's SCIM requests and health, rotates its secret with a grace period, manages admin tokens and shows a suspended key", async () => {
    const problemsBefore = browser.problems.length;
    const page = await browser.page(1280);
    await page.goto(`${origin}/portal/connections/${encodeURIComponent(made.clientId)}/settings`);
    await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
    await page.getByRole("button", { name: "Sign in" }).click();
    const general = page.getByRole("form", { name: "General" });
    await general.getByLabel("SCIM request log").selectOption("all");
    await general.getByRole("button", { name: "Save settings" }).click();
    await general.getByText("Saved.").waitFor();
    const webhook = page.getByRole("form", { name: "Webhook" });
    await webhook.getByLabel("Retries").selectOption("backoff");
    await webhook.getByRole("button", { name: "Save webhook" }).click();
    await webhook.getByText("Saved.").waitFor();
    // Extensions: a typo is caught before anything is sent, then a declaration is stored.
    const extensions = page.getByRole("form", { name: "SCIM schema extensions" });
    await extensions.getByLabel("Declarations (JSON array)").fill("[{");
    await extensions.getByRole("button", { name: "Save extensions" }).click();
    await extensions.getByRole("alert").filter({ hasText: "not JSON" }).waitFor();
    await extensions.getByLabel("Declarations (JSON array)").fill(
      JSON.stringify([
        {
          schema: "urn:okta:acme:1.0:user",
          name: "AcmeUser",
          resource: "User",
          attributes: [{ name: "costCode", type: "string" }],
        },
      ]),
    );
    await extensions.getByRole("button", { name: "Save extensions" }).click();
    await extensions.getByText("Declared: urn:okta:acme:1.0:user.").waitFor();
    expect(await extensions.getByRole("alert").count()).toBe(0);
    const stored = (await (
      await fetch(`${origin}/v2alpha1/admin/scimClients/${encodeURIComponent(made.clientId)}`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      })
    ).json()) as { request_log: string; webhook: { retry: string }; extensions: unknown[] };
    expect(stored).toMatchObject({ request_log: "all", webhook: { retry: "backoff" } });
    expect(stored.extensions).toHaveLength(1);

    // Rotation with a grace period: both secrets work, the guide says until when.
    await page.getByRole("link", { name: "Setup guide" }).click();
    await page.getByLabel("The current secret keeps working for").selectOption("86400");
    await page.getByRole("button", { name: "Rotate secret" }).click();
    await page
      .getByRole("dialog", { name: "Rotate the SCIM secret?" })
      .getByRole("button", { name: "Rotate secret" })
      .click();
    await page.getByText("Previous secret accepted until").waitFor();
    const rotated = await page.getByLabel("Authorization (Bearer)", { exact: true }).inputValue();
    expect(rotated).not.toBe(made.secret);
    expect(page.url()).not.toContain(rotated);
    await scim(made.baseUrl, made.secret, "GET", "/Users?count=1", undefined);
    await scim(made.baseUrl, rotated, "GET", "/Users?count=1", undefined);
    await check(page, "connection-setup-rotated");

    // An IdP's refused request (a duplicate userName) lands in the request log with both bodies.
    const dup = await fetch(`${made.baseUrl}/Users`, {
      method: "POST",
      headers: { authorization: `Bearer ${rotated}`, "content-type": "application/scim+json" },
      body: JSON.stringify({ ...idpBody("okta-create-user"), userName: "ada@acme.example", emails: [] }),
    });
    expect(dup.status).toBe(409);
    await obs.writer.flush();
    await page.reload();
    await page.getByRole("link", { name: "SCIM requests" }).click();
    const health = page.getByRole("definition").filter({ hasText: /^\d+$/ });
    await expect.poll(() => health.count()).toBeGreaterThan(0);
    await page.getByText("see the request log").waitFor();
    await page.getByRole("list", { name: "SCIM requests" }).getByText("GET /Users").first().waitFor();
    await page.getByLabel("Status").fill("409");
    await page.getByLabel("Method").selectOption("POST");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await expect.poll(() => page.getByRole("list", { name: "SCIM requests" }).getByRole("listitem").count()).toBe(1);
    await page.getByRole("button", { name: "POST /Users" }).click();
    const request = page.getByRole("complementary", { name: "Request detail" });
    await request.getByRole("heading", { name: "Request body" }).waitFor();
    await request.getByText('"userName": "ada@acme.example"').waitFor();
    await request.getByRole("heading", { name: "Response body" }).waitFor();
    await request.getByText('"scimType": "uniqueness"').waitFor();
    await check(page, "connection-requests");

    // Named admin tokens: a viewer token, shown once, then revoked.
    await page.getByRole("link", { name: "Admin tokens" }).click();
    await page.getByText("No named admin tokens").waitFor();
    await page.getByLabel("Token name").fill("grafana");
    await page.getByRole("button", { name: "Create token" }).click();
    const viewerToken = await page.getByLabel("Token of grafana", { exact: true }).inputValue();
    expect(viewerToken.length).toBeGreaterThan(20);
    await page.getByRole("list", { name: "Admin tokens" }).getByText("viewer").waitFor();
    await check(page, "admin-tokens");
    await page.getByRole("button", { name: "Revoke grafana" }).click();
    await page.getByRole("dialog", { name: "Revoke grafana?" }).getByRole("button", { name: "Revoke token" }).click();
    await page.getByRole("list", { name: "Admin tokens" }).getByText("revoked", { exact: true }).waitFor();

    // A key that follows its person is shown suspended once the IdP deactivates that person.
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByRole("button", { name: "Create an issued key" }).click();
    await page.getByLabel("Name").fill("ada laptop");
    await page.getByLabel("Organization id").fill(made.orgId);
    await page.getByLabel("Actor id").fill(made.adaId);
    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByLabel("Secret of ada laptop", { exact: true }).waitFor();
    // The feed from now on: empty, then Okta deactivates Ada and the change shows up when asked, with the suspension
    // of the key that follows her.
    await page.goto(`${origin}/portal/organizations/${made.orgId}/events`);
    await page.getByLabel("Start from").selectOption("now");
    await page.getByText("Changes made from now on appear here").waitFor();
    await scim(made.baseUrl, rotated, "PATCH", `/Users/${made.adaId}`, idpBody("okta-patch-deactivate"));
    await expect
      .poll(
        async () => {
          await page.getByRole("button", { name: "Check for newer events" }).click();
          return page.getByRole("list", { name: "Feed events" }).getByRole("listitem").count();
        },
        { timeout: 90_000 },
      )
      .toBe(2);
    await page.getByRole("button", { name: "user.updated" }).waitFor();
    await page.getByRole("button", { name: "api_key.suspended" }).waitFor();
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByText(/^Suspended: the identity it acts for is inactive/).waitFor();
    await page.getByRole("list", { name: "Issued keys" }).getByText("suspended", { exact: true }).waitFor();
    await check(page, "api-keys-suspended");
    // No token or secret shown on the way is kept anywhere but in the page's memory.
    expect(await page.evaluate("localStorage.length")).toBe(0);
    const session = (await page.evaluate("JSON.stringify(sessionStorage)")) as string;
    expect([viewerToken, rotated].filter((secret) => session.includes(secret))).toEqual([]);
    expect(browser.problems.slice(problemsBefore)).toEqual([]);
    await page.close();
  }, 150_000);

  it("fits every page into 390 px with no sideways scrolling and no serious accessibility violation", async () => {
    expect(visited.size).toBeGreaterThan(8);
    const page = await browser.page(390, 844);
    await page.goto(`${origin}/portal/sign-in`);
    await check(page, "sign-in");
    // By keyboard alone.
    await page.keyboard.press("Tab");
    await page.keyboard.type(ADMIN_TOKEN);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Organizations" }).waitFor();
    // Each address once, named after the last state the walks left it in (which is what a deep link shows now).
    const byPath = new Map([...visited].map(([name, path]) => [path, name]));
    for (const [path, name] of byPath) {
      if (name === "sign-in" || name.endsWith("-dialog")) continue;
      // A deep link, as a reload would load it.
      await page.goto(`${origin}${path}`);
      await page.locator("main h1").waitFor();
      await check(page, name);
    }
    await page.close();
  }, 80_000);
});
