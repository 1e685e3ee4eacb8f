import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

// The deployment recipes in the repository: the systemd unit passes `systemd-analyze verify` with nothing to say,
// and what the Dockerfile and compose.yaml refer to exists. (No container engine runs the image here: see
// docs/deploying.md for what is and is not exercised.)

const ROOT = join(import.meta.dirname, "../..");
const ANALYZE = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].find((p) => existsSync(p));
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

describe.skipIf(ANALYZE === undefined)(
  `deploy/systemd/roster.service${ANALYZE === undefined ? " (skipped: systemd-analyze is not installed; .ci/run installs it)" : ""}`,
  () => {
    it("passes systemd-analyze verify without a warning", async () => {
      const { stdout, stderr } = await promisify(execFile)(ANALYZE ?? "", [
        "verify",
        join(ROOT, "deploy/systemd/roster.service"),
      ]);
      // Unknown keys and bad values are only warnings to systemd-analyze (exit 0): any output is a failure here.
      expect(`${stdout}${stderr}`.trim()).toBe("");
    });

    it("starts what npm start starts and reloads TLS with SIGHUP", () => {
      const unit = read("deploy/systemd/roster.service");
      expect(unit).toContain("ExecStart=/usr/bin/node --max-semi-space-size=32 --import tsx src/server.ts");
      expect(JSON.parse(read("package.json")).scripts.start).toBe(
        "exec node --max-semi-space-size=32 --import tsx src/server.ts",
      );
      expect(unit).toContain("ExecReload=/bin/kill -HUP $MAINPID");
    });
  },
);

describe("Dockerfile and compose.yaml", () => {
  it("every file the Dockerfile copies from the build context exists", () => {
    const sources = read("Dockerfile")
      .split("\n")
      .filter((l) => /^COPY /.test(l) && !l.includes("--from="))
      .flatMap((l) =>
        l
          .replace(/^COPY\s+/, "")
          .split(/\s+/)
          .slice(0, -1),
      );
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) expect(existsSync(join(ROOT, source)), source).toBe(true);
    expect(read("Dockerfile")).toContain(
      'CMD ["node", "--max-semi-space-size=32", "--import", "tsx", "src/server.ts"]',
    );
  });

  it("compose.yaml builds this directory's Dockerfile and gives Roster a PostgreSQL URL and its secrets", () => {
    const compose = read("compose.yaml");
    expect(compose).toMatch(/^\s+build: \.$/m);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose's own ${…} interpolation, read literally
    expect(compose).toContain("ROSTER_DATABASE_URL: postgres://roster:${POSTGRES_PASSWORD}@postgres:5432/roster");
    expect(compose).toContain("ROSTER_SECRETS: ${ROSTER_SECRETS:?");
    // The image's health check asks the route Roster serves.
    expect(read("Dockerfile")).toContain("/health/ready");
  });
});
