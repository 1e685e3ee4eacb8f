import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, USER_SCHEMA } from "../helpers/constants.js";
import { waitFor } from "../helpers/roster-process.js";
import { useTestApp } from "../helpers/suite.js";
import { httpsCall, type SelfSigned, selfSigned } from "../helpers/tls.js";

// Roster behind a real reverse proxy terminating TLS, configured by the examples in deploy/proxy/ (their names, ports
// and certificate paths replaced): nginx and Caddy from Debian's packages (.ci/run installs both). Roster trusts the
// proxy (ROSTER_TRUST_PROXY=127.0.0.1) and has no ROSTER_PUBLIC_URL: the SCIM URLs it hands out are the proxy's, and
// the client address it logs is the client's (127.0.0.2 here), never one the client forged.

const ROOT = join(import.meta.dirname, "../..");
const NGINX = "/usr/sbin/nginx";
const CADDY = "/usr/bin/caddy";
const CLIENT_ADDRESS = "127.0.0.2";

let dir: string;
let cert: SelfSigned;
let rosterPort: number;

const { roster } = useTestApp({
  process: { ROSTER_TRUST_PROXY: "127.0.0.1", ROSTER_LOG_LEVEL: "info", ROSTER_LOG_FORMAT: "json" },
});
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "roster-proxy-"));
  cert = await selfSigned(dir, "localhost");
  rosterPort = Number(new URL(roster.url).port);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

interface Proxy {
  readonly url: string;
  stop(): Promise<void>;
}

async function startNginx(port: number): Promise<Proxy> {
  const prefix = join(dir, "nginx");
  await mkdir(prefix, { recursive: true });
  const site = (await readFile(join(ROOT, "deploy/proxy/nginx.conf"), "utf8"))
    .replace("listen 443 ssl http2;", `listen 127.0.0.1:${port} ssl http2;`)
    .replace(/^\s*listen \[::\]:443.*$/m, "")
    .replace("server_name roster.example.com;", "server_name localhost;")
    .replace("/etc/ssl/roster/fullchain.pem", cert.certFile)
    .replace("/etc/ssl/roster/privkey.pem", cert.keyFile)
    .replace("http://127.0.0.1:8080", `http://127.0.0.1:${rosterPort}`);
  await writeFile(join(prefix, "site.conf"), site);
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .map((t) => `${t}_temp_path ${join(prefix, t)};`)
    .join("\n  ");
  await writeFile(
    join(prefix, "main.conf"),
    `${process.getuid?.() === 0 ? "user root;\n" : ""}pid ${join(prefix, "nginx.pid")};
error_log stderr warn;
worker_processes 1;
events { worker_connections 64; }
http {
  access_log off;
  ${temp}
  include ${join(prefix, "site.conf")};
}
`,
  );
  return spawnProxy(
    NGINX,
    ["-p", prefix, "-c", join(prefix, "main.conf"), "-e", "stderr", "-g", "daemon off;"],
    {},
    port,
  );
}

async function startCaddy(port: number): Promise<Proxy> {
  const home = join(dir, "caddy");
  await mkdir(home, { recursive: true });
  const site = (await readFile(join(ROOT, "deploy/proxy/Caddyfile"), "utf8"))
    .replace(
      "roster.example.com {",
      `https://localhost:${port} {\n\tbind 127.0.0.1\n\ttls ${cert.certFile} ${cert.keyFile}`,
    )
    .replace("127.0.0.1:8080", `127.0.0.1:${rosterPort}`);
  const file = join(home, "Caddyfile");
  await writeFile(file, `{\n\tadmin off\n\tauto_https disable_redirects\n}\n\n${site}`);
  const env = { HOME: home, XDG_DATA_HOME: join(home, "data"), XDG_CONFIG_HOME: join(home, "config") };
  return spawnProxy(CADDY, ["run", "--config", file, "--adapter", "caddyfile"], env, port);
}

async function spawnProxy(bin: string, args: string[], env: Record<string, string>, port: number): Promise<Proxy> {
  const child: ChildProcess = spawn(bin, args, {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  child.stdout?.on("data", (d: Buffer) => output.push(d.toString()));
  child.stderr?.on("data", (d: Buffer) => output.push(d.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `https://localhost:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  try {
    await waitFor(
      `${bin} to answer on ${port}`,
      async () => {
        if (child.exitCode !== null) throw new Error(`${bin} exited:\n${output.join("")}`);
        return (await httpsCall(`${url}/health/alive`, { ca: cert.cert })).status === 200;
      },
      20_000,
    );
  } catch (e) {
    await stop();
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n${output.join("")}`);
  }
  return { url, stop };
}

const proxies = [
  { name: "nginx", bin: NGINX, start: startNginx },
  { name: "Caddy", bin: CADDY, start: startCaddy },
];

for (const { name, bin, start } of proxies) {
  const missing = !existsSync(bin);
  const title = missing ? `behind ${name} (skipped: ${bin} is not installed; .ci/run installs it)` : `behind ${name}`;
  describe.skipIf(missing)(title, () => {
    let proxy: Proxy;
    beforeAll(async () => {
      proxy = await start(await freePort());
    }, 60_000);
    afterAll(async () => {
      await proxy?.stop();
    });

    const call = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
      httpsCall(`${proxy.url}${path}`, {
        ca: cert.cert,
        method,
        localAddress: CLIENT_ADDRESS,
        headers: {
          ...headers,
          // Forged by the client: the proxy must not pass them on as the truth.
          "x-forwarded-for": "198.51.100.9",
          "x-forwarded-host": "forged.example.com",
          "x-forwarded-proto": "http",
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

    it("hands out the proxy's https:// URL and logs the client's own address", async () => {
      const org = await call("POST", "/v2alpha1/admin/organizations", admin, { name: `Via ${name}` });
      expect(org.status, org.body).toBe(201);
      const orgId = JSON.parse(org.body).id as string;
      const secret = `proxy-secret-${name}-0123456789`;
      const client = await call("POST", "/v2alpha1/admin/scimClients", admin, { organization_id: orgId, secret });
      expect(client.status, client.body).toBe(201);
      const { client_id: clientId, scim_base_url: base } = JSON.parse(client.body) as Record<string, string>;
      expect(base).toBe(`${proxy.url}/scim/${clientId}/v2`);

      const created = await httpsCall(`${base}/Users`, {
        ca: cert.cert,
        method: "POST",
        localAddress: CLIENT_ADDRESS,
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/scim+json" },
        body: JSON.stringify({ schemas: [USER_SCHEMA], userName: `via-${name}@example.com` }),
      });
      expect(created.status, created.body).toBe(201);
      expect(JSON.parse(created.body).meta.location).toMatch(new RegExp(`^${base}/Users/[0-9a-f-]+$`));
      expect(created.headers.location).toBe(JSON.parse(created.body).meta.location);

      const missing = await call("GET", `/scim/${clientId}/v2/Users/nope`, { authorization: `Bearer ${secret}` });
      expect(missing.status).toBe(404);

      // The lines are written once the answers are sent: wait for them (another process, no event to wait on).
      const lines = () =>
        roster.output.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>);
      const find = (check: (l: Record<string, unknown>) => boolean) => lines().find(check);
      const isChange = (l: Record<string, unknown>) =>
        l.msg === "admin change" && l.target === `organizations/${orgId}`;
      const isFailed = (l: Record<string, unknown>) => l.msg === "SCIM request failed" && l.clientId === clientId;
      await waitFor("the log lines", async () => find(isChange) !== undefined && find(isFailed) !== undefined, 10_000);
      expect(find(isChange)?.ip).toBe(CLIENT_ADDRESS);
      expect(find(isFailed)?.ip).toBe(CLIENT_ADDRESS);
    });
  });
}
