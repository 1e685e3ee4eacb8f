import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { Agent, request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN } from "../helpers/constants.js";
import { waitFor } from "../helpers/roster-process.js";
import { useTestApp } from "../helpers/suite.js";
import { type SelfSigned, selfSigned } from "../helpers/tls.js";

// Roster serving HTTPS itself from ROSTER_TLS_CERT/ROSTER_TLS_KEY: certificates made here with openssl, the files
// replaced and SIGHUP sent; new connections get the new certificate while an open keep-alive connection goes on.

let dir: string;
let first: SelfSigned;
const files = () => ({ certFile: join(dir, "server.crt"), keyFile: join(dir, "server.key") });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "roster-tls-"));
  first = await selfSigned(dir, "roster-tls-one", files());
});
const { roster } = useTestApp({
  process: () => ({ ROSTER_TLS_CERT: files().certFile, ROSTER_TLS_KEY: files().keyFile, ROSTER_LOG_LEVEL: "info" }),
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Sends SIGHUP and waits until the process logs one more line containing `line` than it had before. */
async function sighupUntilLogged(line: string): Promise<void> {
  const count = () => roster.output.filter((l) => l.includes(line)).length;
  const before = count();
  process.kill(roster.pid, "SIGHUP");
  await waitFor(`"${line}" to be logged`, async () => count() > before, 15_000);
}

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly socket: TLSSocket;
  readonly reused: boolean;
}

/** A GET over HTTPS trusting only `ca`, on `agent`'s connections (keep-alive). */
function get(agent: Agent, ca: string, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${roster.url}${path}`, { agent, ca, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, body, socket: req.socket as TLSSocket, reused: req.reusedSocket }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

const commonName = (socket: TLSSocket): unknown => socket.getPeerCertificate().subject?.CN;

describe("HTTPS from ROSTER_TLS_CERT and ROSTER_TLS_KEY", () => {
  it("serves HTTPS with the certificate, and hands out https:// URLs", async () => {
    expect(roster.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const ready = await get(agent, first.cert, "/health/ready");
      expect(ready.status).toBe(200);
      expect(commonName(ready.socket)).toBe("roster-tls-one");
      // Still loopback, but no longer plain HTTP.
      const warnings = JSON.parse(ready.body).warnings as string[];
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain("loopback");
    } finally {
      agent.destroy();
    }
  });

  it("a plain-HTTP request on the port is refused, not answered in the clear", async () => {
    await expect(fetch(roster.url.replace("https:", "http:"), { signal: AbortSignal.timeout(5000) })).rejects.toThrow();
  });

  it("SIGHUP: new connections get the replaced certificate; an open keep-alive connection is not dropped", async () => {
    const kept = new Agent({ keepAlive: true, maxSockets: 1 });
    const fresh = new Agent({ keepAlive: false });
    try {
      const before = await get(kept, first.cert, "/health/alive");
      expect(before.status).toBe(200);
      expect(commonName(before.socket)).toBe("roster-tls-one");

      const second = await selfSigned(dir, "roster-tls-two", files());
      await sighupUntilLogged("TLS certificate reloaded");

      const after = await get(fresh, second.cert, "/health/alive");
      expect(after.status).toBe(200);
      expect(commonName(after.socket)).toBe("roster-tls-two");

      // The same TLS connection as before the reload answers again, still with the certificate it shook hands on.
      const again = await get(kept, first.cert, "/health/alive");
      expect(again.status).toBe(200);
      expect(again.reused).toBe(true);
      expect(again.socket).toBe(before.socket);
      expect(commonName(again.socket)).toBe("roster-tls-one");
      expect(roster.exitStatus()).toBeUndefined();
    } finally {
      kept.destroy();
      fresh.destroy();
    }
  });

  it("a reload from a broken pair keeps serving the previous certificate", async () => {
    await writeFile(files().keyFile, "not a key\n");
    await sighupUntilLogged("TLS certificate reload failed");
    const agent = new Agent({ keepAlive: false });
    try {
      const res = await get(agent, readFileSync(files().certFile, "utf8"), "/health/alive");
      expect(res.status).toBe(200);
      expect(commonName(res.socket)).toBe("roster-tls-two");
    } finally {
      agent.destroy();
    }
  });
});
