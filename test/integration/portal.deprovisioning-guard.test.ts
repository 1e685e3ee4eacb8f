import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN } from "../helpers/app.js";
import { type Browser, launchBrowser, screenshot, seriousViolations } from "../helpers/browser.js";
import { PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { adminCall, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * The morning after, in Chromium: an Okta-shaped burst deactivates 60 users of a 60-user organization through one
 * connection with the default guard (20 % and 50 users per hour), the connection page shows the banner with the
 * held count and users, and the operator releases them after a confirmation that states the count.
 */
const { t } = useTestApp({ listen: true });
let browser: Browser;
let c: SeededClient;

beforeAll(async () => {
  browser = await launchBrowser();
  c = await seedClient(t);
});
afterAll(async () => {
  await browser?.close();
});

describe("the deprovisioning guard in the portal", () => {
  it("shows the banner after an Okta burst of 60 deactivations and releases the held ones", {
    timeout: 120_000,
  }, async () => {
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const res = await scim(t, c, "POST", "/Users", {
        schemas: [USER_SCHEMA],
        userName: `okta-${i}@example.com`,
        emails: [{ value: `okta-${i}@example.com`, primary: true }],
      });
      expect(res.statusCode, res.body).toBe(201);
      ids.push(res.json().id as string);
    }
    // Okta deactivates with a path-less replace of `active`.
    for (const id of ids) {
      const res = await scim(t, c, "PATCH", `/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "replace", value: { active: false } }],
      });
      expect(res.statusCode, res.body).toBe(200);
    }
    const guard = (await adminCall(t, "GET", `/scimClients/${c.clientId}/deprovisioningGuard`)).json();
    expect(guard).toMatchObject({ state: "HOLDING", held_events: 10, held_users: 10, window_count: 60 });

    const page = await browser.page(1280);
    await page.goto(`${t.url}/portal/sign-in`);
    await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Organizations" }).waitFor();
    await page.goto(`${t.url}/portal/connections/${c.clientId}`);
    const banner = page.getByRole("alert", { name: "Deprovisioning held" });
    await banner.waitFor();
    expect(await banner.textContent()).toContain("10 events");
    expect(await banner.textContent()).toContain("okta-59@example.com");
    await browser.settled(page);
    await screenshot(page, "deprovisioning-held-1280");
    expect(await seriousViolations(page), "axe on the banner").toEqual([]);

    await banner.getByRole("button", { name: "Release 10 events" }).click();
    const dialog = page.getByRole("dialog", { name: "Release held deprovisioning" });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain("10 held events of 10 users");
    expect(await seriousViolations(page), "axe on the confirmation").toEqual([]);
    // The portal calls the guard's documented action, not the connection's older spelling of it.
    const released = page.waitForRequest((r) => r.method() === "POST" && r.url().includes(":release"));
    await dialog.getByRole("button", { name: "Release 10 events" }).click();
    expect(new URL((await released).url()).pathname).toBe(
      `/v2alpha1/admin/scimClients/${c.clientId}/deprovisioningGuard:release`,
    );
    await banner.waitFor({ state: "detached" });

    const after = (await adminCall(t, "GET", `/scimClients/${c.clientId}/deprovisioningGuard`)).json();
    expect(after).toMatchObject({ state: "FLOWING", held_events: 0 });
    const audit = (await adminCall(t, "GET", "/auditLog?page_size=20")).json();
    const actions = audit.entries.map((e: { action: string }) => e.action);
    expect(actions).toContain("scimClients.deprovisioningGuard.release");
    expect(actions).not.toContain("scimClients.releaseHeldDeprovisioning");
    // All 60 deactivations are in the feed now, the 10 released ones last, in the burst's order.
    const { rows } = await sql<{ data: string }>`select data from directory_events
      where directory_id = ${c.clientId} and event = 'user.updated' order by txid, seq`.execute(t.db);
    expect(rows.map((r) => (JSON.parse(r.data) as { id: string; active: boolean }).id)).toEqual(ids);
    const client = await adminCall(t, "GET", `/scimClients/${c.clientId}`);
    expect(client.json().deprovisioning_guard).toMatchObject({ state: "FLOWING", window_count: 0 });
  });

  it("changes the guard's limits and switches it off from the connection's settings", { timeout: 60_000 }, async () => {
    const page = await browser.page(1280);
    await page.goto(`${t.url}/portal/sign-in`);
    await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Organizations" }).waitFor();
    await page.goto(`${t.url}/portal/connections/${c.clientId}/settings`);
    const form = page.getByRole("form", { name: "Deprovisioning guard" });
    await form.waitFor();
    await form.getByLabel("Share of active users (%)").fill("10");
    await form.getByLabel("Users", { exact: true }).fill("200");
    await form.getByLabel("Window (minutes)").fill("120");
    await form.getByRole("button", { name: "Save guard" }).click();
    await form.getByRole("status").waitFor();
    const read = async () => (await adminCall(t, "GET", `/scimClients/${c.clientId}/deprovisioningGuard`)).json();
    expect(await read()).toMatchObject({ enabled: true, share_percent: 10, min_count: 200, window_seconds: 7200 });

    // Out of range: the browser refuses the field (its range is the API's), nothing is sent, nothing changes.
    const users = form.getByLabel("Users", { exact: true });
    await users.fill("0");
    await form.getByRole("button", { name: "Save guard" }).click();
    expect(await form.locator("input:invalid").count()).toBe(1);
    expect(await read()).toMatchObject({ min_count: 200 });

    await users.fill("200");
    await form.getByLabel("Hold mass deprovisioning (guard on)").uncheck();
    await form.getByRole("button", { name: "Save guard" }).click();
    await form.getByRole("status").waitFor();
    expect(await read()).toMatchObject({ enabled: false, share_percent: 10, min_count: 200 });
    await browser.settled(page);
    expect(await seriousViolations(page), "axe on the settings").toEqual([]);
    await screenshot(page, "deprovisioning-guard-settings-1280");
  });
});
