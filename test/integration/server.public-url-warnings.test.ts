import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServerDatabase, type ServerDatabase } from "../helpers/database.js";
import { type RosterProcess, startRosterProcess, waitFor } from "../helpers/roster-process.js";

// Roster tells whoever starts it when the SCIM base URL it hands out is one an IdP cannot use (loopback, plain HTTP),
// and what to set: in the start banner, in one start-up WARN, and in GET /health/ready's `warnings`.

let database: ServerDatabase;
beforeAll(async () => {
  database = await createServerDatabase();
});
afterAll(async () => {
  await database?.drop();
});

async function withRoster(env: Record<string, string>, check: (roster: RosterProcess) => Promise<void>) {
  const roster = await startRosterProcess(database.url, {
    ROSTER_LOG_LEVEL: "info",
    ROSTER_LOG_FORMAT: "json",
    ...env,
  });
  try {
    await check(roster);
  } finally {
    await roster.stop();
  }
}

const ready = async (url: string) => (await (await fetch(`${url}/health/ready`)).json()) as { warnings?: string[] };

describe("the public URL warning", () => {
  it("the default http://127.0.0.1 base: banner, one WARN and /health/ready all say loopback and plain HTTP", async () => {
    await withRoster({}, async (roster) => {
      const { warnings } = await ready(roster.url);
      expect(warnings).toHaveLength(2);
      expect(warnings?.[0]).toMatch(/loopback.*ROSTER_PUBLIC_URL/);
      expect(warnings?.[1]).toMatch(/plain HTTP.*ROSTER_TLS_CERT.*ROSTER_TRUST_PROXY.*ROSTER_PUBLIC_URL=https/);
      const text = roster.output.join("\n");
      expect(text).toContain("Before you connect an IdP:");
      expect(text).toContain(`${roster.url}/scim/<client_id>/v2) is a loopback address`);
      const isWarn = (l: string) => l.startsWith("{") && (JSON.parse(l) as { level: number }).level === 40;
      await waitFor("the start-up WARN", async () => roster.output.some(isWarn), 10_000);
      const warns = roster.output
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { level: number; warnings?: string[] })
        .filter((l) => l.level === 40);
      expect(warns).toHaveLength(1);
      expect(warns[0]?.warnings).toEqual(warnings);
    });
  }, 120_000);

  it("an https:// ROSTER_PUBLIC_URL on a real host name: no warning anywhere", async () => {
    await withRoster({ ROSTER_PUBLIC_URL: "https://roster.example.com" }, async (roster) => {
      // The banner shows the public URL; where it listens is in the ready line.
      const readyLine = () =>
        roster.output
          .filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l) as { msg: string; url?: string })
          .find((l) => l.msg === "Roster ready")?.url;
      await waitFor("the ready line", async () => readyLine() !== undefined, 10_000);
      const listening = readyLine();
      expect(roster.url).toBe("https://roster.example.com");
      expect((await ready(String(listening))).warnings).toEqual([]);
      expect(roster.output.join("\n")).not.toContain("Before you connect an IdP");
      expect(roster.output.some((l) => l.startsWith("{") && (JSON.parse(l) as { level: number }).level >= 40)).toBe(
        false,
      );
    });
  }, 120_000);
});
