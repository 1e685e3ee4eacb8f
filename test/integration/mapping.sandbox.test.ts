import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MappingSourcePolicy } from "../../src/directory/mapping/policy.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { adminCall, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { USER_SCHEMA } from "../helpers/constants.js";

/**
 * The data mapping cannot read the host or the internal network, never quotes what it read, and no script stalls
 * the process (docs/decisions.md "Mapping sandbox").
 */
const GOOD = '{"login": $lowercase(userName)}';
const SECRET = "c9f1hunter2secret";
/** Not JSONata; its syntax error names the secret token when the text is given inline (checked below). */
const BROKEN = `a = b ${SECRET}`;
const CATASTROPHIC = '{"m": $contains(userName, /^(a+)+$/)}';

let root = "";
let dir = "";
let outside = "";
let hits: string[] = [];
const servers: Server[] = [];
/** Serves scripts and redirects on 127.0.0.1 (`local`) and on 127.0.0.2 (`second`). */
let local = "";
let second = "";
/** Three apps on one database, each with its own source policy. */
let sandboxed: TestApp;
let unconfigured: TestApp;
let namesOnly: TestApp;

const listen = async (host: string): Promise<string> => {
  const server = createServer((req, res) => {
    hits.push(`${host}${req.url}`);
    const redirect = (location: string) => {
      res.statusCode = 302;
      res.setHeader("location", location);
      res.end(`redirecting; body ${SECRET}`);
    };
    if (req.url === "/mapping.jsonata") res.end(GOOD);
    else if (req.url === "/broken") res.end(BROKEN);
    else if (req.url === "/to-self") redirect("/mapping.jsonata");
    else if (req.url === "/to-private") redirect("http://10.255.255.1/mapping.jsonata");
    else if (req.url === "/to-metadata") redirect("http://169.254.169.254/latest/meta-data/");
    else if (req.url === "/to-file") redirect(pathToFileURL(join(dir, "good.jsonata")).href);
    else if (req.url === "/to-localhost") redirect(`${local.replace("127.0.0.1", "localhost")}/mapping.jsonata`);
    else if (req.url === "/loop") redirect("/loop");
    else {
      res.statusCode = 404;
      res.end(SECRET);
    }
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return `http://${host}:${(server.address() as AddressInfo).port}`;
};

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "roster-sandbox-"));
  dir = join(root, "mappings");
  outside = join(root, "elsewhere");
  mkdirSync(dir);
  mkdirSync(outside);
  writeFileSync(join(dir, "good.jsonata"), GOOD);
  writeFileSync(join(dir, "broken.jsonata"), BROKEN);
  // Valid JSONata: read, it would come back whole as the traits.
  writeFileSync(join(outside, "secret.json"), `{"password": "${SECRET}"}`);
  symlinkSync(join(outside, "secret.json"), join(dir, "link.jsonata"));
  local = await listen("127.0.0.1");
  second = await listen("127.0.0.2");
  const policy = (p: MappingSourcePolicy) => ({ extra: { mappingSources: p } });
  sandboxed = await createTestApp(policy({ dir, urlAllow: ["127.0.0.1", "127.0.0.2"] }));
  unconfigured = await createTestApp({ database: sandboxed.database });
  namesOnly = await createTestApp({
    database: sandboxed.database,
    ...policy({ dir: undefined, urlAllow: ["localhost"] }),
  });
});

afterAll(async () => {
  await namesOnly.close();
  await unconfigured.close();
  await sandboxed.close();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  rmSync(root, { recursive: true, force: true });
});

/** `:testMapping` with the given mapping: the traits, or the admin error message. */
async function tryMapping(t: TestApp, mapping: string, userName = "Probe@Example.com") {
  const c = await seedClient(t);
  const res = await adminCall(t, "POST", `/scimClients/${c.clientId}:testMapping`, { user: { userName }, mapping });
  return {
    status: res.statusCode,
    traits: res.statusCode === 200 ? res.json().traits : undefined,
    message: res.statusCode === 200 ? "" : String(res.json().error?.message),
    body: res.body,
  };
}

const fileUrl = (path: string) => pathToFileURL(path).href;

describe("file:// sources", () => {
  it("a script below ROSTER_MAPPING_DIR is read", async () => {
    const r = await tryMapping(sandboxed, fileUrl(join(dir, "good.jsonata")));
    expect(r.traits).toEqual({ login: "probe@example.com" });
  });

  it.each([
    ["/proc/self/environ", () => "file:///proc/self/environ"],
    ["a file elsewhere", () => fileUrl(join(outside, "secret.json"))],
    ["a `..` path out of the directory", () => `${fileUrl(dir)}/../elsewhere/secret.json`],
    ["an encoded `..`", () => `${fileUrl(dir)}/%2e%2e/elsewhere/secret.json`],
    ["a symlink inside pointing outside", () => fileUrl(join(dir, "link.jsonata"))],
  ])("%s is refused, and nothing of it is answered", async (_name, url) => {
    const r = await tryMapping(sandboxed, url());
    expect(r.status).toBe(400);
    expect(r.message).toMatch(/outside ROSTER_MAPPING_DIR/);
    expect(r.body).not.toContain(SECRET);
    expect(r.body).not.toContain(process.env.PATH ?? "never");
  });

  it("without ROSTER_MAPPING_DIR every file:// source is refused, when stored and when tried", async () => {
    const r = await tryMapping(unconfigured, fileUrl(join(dir, "good.jsonata")));
    expect(r.status).toBe(400);
    expect(r.message).toMatch(/ROSTER_MAPPING_DIR is not set/);
    const stored = await adminCall(unconfigured, "POST", "/scimClients", {
      organization_id: (await seedClient(unconfigured)).organizationId,
      mapping: "file:///etc/passwd",
    });
    expect(stored.statusCode).toBe(400);
  });
});

describe("http(s):// sources", () => {
  it("an allowed host is fetched", async () => {
    expect((await tryMapping(sandboxed, `${local}/mapping.jsonata`)).traits).toEqual({ login: "probe@example.com" });
  });

  it("without ROSTER_MAPPING_URL_ALLOW nothing is fetched", async () => {
    const before = hits.length;
    const r = await tryMapping(unconfigured, `${local}/mapping.jsonata`);
    expect(r.status).toBe(400);
    expect(r.message).toMatch(/ROSTER_MAPPING_URL_ALLOW is not set/);
    expect(hits.length).toBe(before);
  });

  it("a host allowed by name that resolves to a loopback address is refused before connecting", async () => {
    const before = hits.length;
    const r = await tryMapping(namesOnly, `${local.replace("127.0.0.1", "localhost")}/mapping.jsonata`);
    expect(r.status).toBe(400);
    expect(r.message).toMatch(/resolves to a loopback, link-local or private address/);
    expect(hits.length).toBe(before);
  });

  it.each([
    ["a private address", "http://10.1.2.3/mapping.jsonata"],
    ["a cloud metadata address", "http://169.254.169.254/latest/meta-data/"],
    ["an IPv4-mapped loopback address", "http://[::ffff:127.0.0.1]/mapping.jsonata"],
    ["an unlisted host", "https://config.example.com/mapping.jsonata"],
  ])("%s not on the list is refused", async (_name, url) => {
    const r = await tryMapping(namesOnly, url);
    expect(r.status).toBe(400);
    expect(r.message).toMatch(/not allowed by ROSTER_MAPPING_URL_ALLOW/);
  });

  it("a host allowed by name is fetched when every address it resolves to is allowed", async () => {
    const app = await createTestApp({
      database: sandboxed.database,
      extra: { mappingSources: { dir: undefined, urlAllow: ["localhost", "127.0.0.1", "::1"] } },
    });
    try {
      const r = await tryMapping(app, `${local.replace("127.0.0.1", "localhost")}/mapping.jsonata`);
      expect(r.traits).toEqual({ login: "probe@example.com" });
    } finally {
      await app.close();
    }
  });

  it("a redirect within the allowed hosts is followed", async () => {
    expect((await tryMapping(sandboxed, `${local}/to-self`)).traits).toEqual({ login: "probe@example.com" });
  });

  it.each([
    ["a private address", "/to-private", /redirects to a host not allowed/],
    ["a cloud metadata address", "/to-metadata", /redirects to a host not allowed/],
    ["a file:// URL", "/to-file", /redirects to a URL that is not http/],
    ["itself, forever", "/loop", /redirects too many times/],
  ])("a redirect to %s is refused", async (_name, path, message) => {
    const r = await tryMapping(sandboxed, `${local}${path}`);
    expect(r.status).toBe(400);
    expect(r.message).toMatch(message);
    expect(r.body).not.toContain(SECRET);
  });

  it("a redirect to a host allowed by name is refused when it resolves to a loopback address", async () => {
    const app = await createTestApp({
      database: sandboxed.database,
      extra: { mappingSources: { dir: undefined, urlAllow: ["127.0.0.2", "localhost"] } },
    });
    try {
      hits = [];
      const r = await tryMapping(app, `${second}/to-localhost`);
      expect(r.status).toBe(400);
      expect(r.message).toMatch(/resolves to a loopback, link-local or private address/);
      expect(hits).toEqual([`127.0.0.2/to-localhost`]);
    } finally {
      await app.close();
    }
  });
});

describe("errors never quote what was read", () => {
  it("an inline script's syntax error quotes it (the admin wrote it)", async () => {
    expect((await tryMapping(sandboxed, BROKEN)).message).toContain(SECRET);
  });

  it.each([
    ["a file", () => fileUrl(join(dir, "broken.jsonata"))],
    ["a URL", () => `${local}/broken`],
  ])("a script from %s is named by its JSONata error code only", async (_name, url) => {
    const r = await tryMapping(sandboxed, url());
    expect(r.status).toBe(400);
    expect(r.message).toMatch(/JSONata error S\d+ in the fetched script/);
    expect(r.body).not.toContain(SECRET);
  });

  it("an error status does not quote the body", async () => {
    const r = await tryMapping(sandboxed, `${local}/missing`);
    expect(r.message).toMatch(/HTTP 404/);
    expect(r.body).not.toContain(SECRET);
  });
});

describe("evaluation has a hard deadline", () => {
  const create = (t: TestApp, c: SeededClient, userName: string) =>
    scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName });

  it("a catastrophic regular expression is cut at the deadline while the process keeps answering", async () => {
    const t = sandboxed;
    const stalled = await seedClient(t, { mapping: CATASTROPHIC });
    const benign = await seedClient(t, { mapping: GOOD });
    const started = performance.now();
    let done = false;
    const write = create(t, stalled, `${"a".repeat(34)}!`).finally(() => {
      done = true;
    });
    // Other requests meanwhile: a mapped write on the other worker, and /health/alive as fast as it answers.
    const other = await create(t, benign, "Other@Example.com");
    const latencies: number[] = [];
    while (!done) {
      const asked = performance.now();
      expect((await t.request({ method: "GET", url: "/health/alive" })).statusCode).toBe(200);
      latencies.push(performance.now() - asked);
      // An injected request can complete in microtasks alone: let timers and worker messages run between them.
      await new Promise(setImmediate);
    }
    const res = await write;
    const elapsed = performance.now() - started;
    console.log(
      `catastrophic regex: answered after ${elapsed.toFixed(0)} ms; ${latencies.length} /health/alive meanwhile, ` +
        `slowest ${Math.max(...latencies).toFixed(1)} ms`,
    );
    expect(res.statusCode).toBe(500);
    expect(res.json().detail).toMatch(/took longer than 1000 ms/);
    expect(elapsed).toBeLessThan(2_500);
    expect(other.statusCode).toBe(201);
    expect(latencies.length).toBeGreaterThan(20);
    expect(Math.max(...latencies)).toBeLessThan(500);
    // The terminated worker was replaced: the same script still maps a user it matches quickly.
    const after = await seedClient(t, { mapping: CATASTROPHIC });
    expect((await create(t, after, "a".repeat(34))).statusCode).toBe(201);
  });

  it("the same through :testMapping answers 400 at the deadline", async () => {
    const started = performance.now();
    const r = await tryMapping(sandboxed, CATASTROPHIC, `${"a".repeat(34)}!`);
    expect(r.status).toBe(400);
    expect(r.message).toMatch(/took longer than 1000 ms/);
    expect(performance.now() - started).toBeLessThan(2_500);
  });
});
