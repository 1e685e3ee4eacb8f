import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DIST_DIR, WEB_DIR } from "./paths.js";

const STAMP = join(DIST_DIR, ".source-hash");
/** Fixtures the mapping editor bundles as sample payloads. */
const FIXTURES = fileURLToPath(new URL("../../test/fixtures/idp/", import.meta.url));
/** Server modules the bundle shares (import-free by design). */
const SHARED = [fileURLToPath(new URL("../directory/event-kinds.ts", import.meta.url))];

function filesUnder(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? filesUnder(path) : [path];
    });
}

/** A digest of everything the build reads, so an unchanged tree skips the build (a few milliseconds). */
function sourceHash(): string {
  const hash = createHash("sha256");
  const versions = ["vite", "preact"].map((p) => {
    const pkg = fileURLToPath(new URL(`../../node_modules/${p}/package.json`, import.meta.url));
    return existsSync(pkg) ? (JSON.parse(readFileSync(pkg, "utf8")) as { version: string }).version : "-";
  });
  hash.update(versions.join(","));
  for (const file of [...filesUnder(WEB_DIR), ...filesUnder(FIXTURES), ...SHARED]) {
    hash.update(file.slice(WEB_DIR.length)).update("\0").update(readFileSync(file)).update("\0");
  }
  return hash.digest("hex");
}

export type BuildOutcome = "up-to-date" | "built" | "skipped";

/** Builds the portal when its sources changed since the last build; without Vite installed (a production install
 * without dev dependencies) an existing build is kept. */
export async function buildPortal(log: (line: string) => void = console.log): Promise<BuildOutcome> {
  const hash = sourceHash();
  if (existsSync(join(DIST_DIR, "index.html")) && existsSync(STAMP) && readFileSync(STAMP, "utf8") === hash) {
    return "up-to-date";
  }
  let vite: typeof import("vite");
  try {
    vite = await import("vite");
  } catch {
    log("portal: vite is not installed (dev dependencies omitted); the portal is not rebuilt");
    return "skipped";
  }
  const started = Date.now();
  await vite.build({
    configFile: false,
    root: WEB_DIR,
    base: "/portal/",
    logLevel: "warn",
    oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
    build: {
      outDir: DIST_DIR,
      emptyOutDir: true,
      target: "es2022",
      // The strict CSP forbids inline code: no preload polyfill, no inlined assets.
      modulePreload: { polyfill: false },
      assetsInlineLimit: 0,
      reportCompressedSize: false,
    },
  });
  writeFileSync(STAMP, hash);
  log(`portal: built into ${DIST_DIR} in ${Date.now() - started} ms`);
  return "built";
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const outcome = await buildPortal();
  if (outcome === "up-to-date") console.log("portal: up to date");
}
