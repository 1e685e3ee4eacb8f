import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { expect } from "vitest";

/** Debian's Chromium; CI installs it when missing. */
export const CHROMIUM = process.env.ROSTER_CHROMIUM ?? "/usr/bin/chromium";

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Where a run's screenshots go (gitignored); a few are copied to docs/portal/ by hand. */
export const SCREENSHOT_DIR = new URL("../../test-results/portal/", import.meta.url).pathname;
/**
 * Screenshots are taken only when asked (`ROSTER_TEST_SCREENSHOTS=1`): they assert nothing, and encoding a
 * full-page PNG of every page checked cost the browser tests a tenth of their time.
 */
const SCREENSHOTS = process.env.ROSTER_TEST_SCREENSHOTS === "1";

export interface Browser {
  readonly context: BrowserContext;
  /** Console errors and CSP violations seen on any page so far. */
  readonly problems: string[];
  page(width: number, height?: number): Promise<Page>;
  /**
   * Resolves once the page shows no "Loading …" note and has had no request in flight for two animation frames:
   * what networkidle waits for, without its fixed half second per page.
   */
  settled(page: Page): Promise<void>;
  close(): Promise<void>;
}

/** Chromium with a fresh profile directory, removed on close. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (or point ROSTER_CHROMIUM at one)`);
  }
  const profile = mkdtempSync(join(tmpdir(), "roster-portal-chromium-"));
  if (SCREENSHOTS) mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
    timezoneId: "Europe/Berlin",
    locale: "en-GB",
  });
  const problems: string[] = [];
  const inflight = new Map<Page, number>();
  const watch = (page: Page) => {
    inflight.set(page, 0);
    const done = () => inflight.set(page, (inflight.get(page) ?? 1) - 1);
    page.on("request", () => inflight.set(page, (inflight.get(page) ?? 0) + 1));
    page.on("requestfinished", done);
    page.on("requestfailed", done);
    page.on("console", (m) => {
      // Failed loads are reported with their URL below.
      if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) problems.push(m.text());
    });
    page.on("response", (r) => {
      if (r.status() >= 400) problems.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
    });
    page.on("pageerror", (e) => problems.push(e.message));
  };
  return {
    context,
    problems,
    async page(width, height = 900) {
      const existing = context.pages()[0];
      const page = existing !== undefined && existing.url() === "about:blank" ? existing : await context.newPage();
      watch(page);
      await page.setViewportSize({ width, height });
      return page;
    },
    async settled(page) {
      await page.waitForLoadState("load");
      const deadline = Date.now() + 15_000;
      for (let quiet = 0; quiet < 2; ) {
        if (Date.now() > deadline) throw new Error(`${page.url()} did not settle: a request or a loading note stayed`);
        // Two frames: effects that start a fetch run after the render that follows a click or a navigation.
        await page.evaluate("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))");
        const loading = (await page.evaluate("/Loading [^\\n]*…/.test(document.body.innerText)")) as boolean;
        quiet = (inflight.get(page) ?? 0) === 0 && !loading ? quiet + 1 : 0;
      }
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly targets: string[];
}

/**
 * axe-core's WCAG 2.x A/AA rules on the page as it is now. The script is evaluated through the DevTools protocol,
 * which the page's CSP does not govern, so the CSP under test stays on.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // Parsing axe costs about as much as running it: a page that navigated in place still has it.
  if ((await page.evaluate("typeof window.axe")) === "undefined") await page.evaluate(AXE_SOURCE);
  // Strings, not functions: they run in the page, whose DOM types this Node project does not load.
  const violations = (await page.evaluate(`(async () => {
    const results = await window.axe.run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
      // Every node of a violation, and only one of each pass or incomplete result, which nothing here reads.
      resultTypes: ["violations"],
    });
    return results.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((n) => n.target.join(" ")),
    }));
  })()`)) as AxeViolation[];
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/** The page is no wider than the viewport: nothing scrolls sideways. */
export async function horizontalOverflow(page: Page): Promise<number> {
  return (await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")) as number;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/**
 * Serves `app` on a loopback port and opens Chromium for it. `clipboard`: the pages may read and write the
 * clipboard (the copy buttons).
 */
export async function servePortal(
  app: FastifyInstance,
  options: { readonly clipboard?: boolean } = {},
): Promise<{ origin: string; browser: Browser }> {
  await app.listen({ host: "127.0.0.1", port: 0 });
  const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const browser = await launchBrowser();
  if (options.clipboard === true) {
    await browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
  }
  return { origin, browser };
}

/** What every portal page is held to once it has settled: no serious axe violation, nothing scrolling sideways. */
export async function checkPage(browser: Browser, page: Page, name: string): Promise<void> {
  await browser.settled(page);
  expect(await seriousViolations(page), `axe on ${name}`).toEqual([]);
  expect(await horizontalOverflow(page), `horizontal overflow on ${name}`).toBeLessThanOrEqual(0);
  await screenshot(page, `${name}-${page.viewportSize()?.width ?? 0}`);
}
