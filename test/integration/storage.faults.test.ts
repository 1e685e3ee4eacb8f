import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type DbProxy, startDbProxy } from "../helpers/db-proxy.js";
import {
  type ChildClient,
  isReady,
  type RosterProcess,
  seedChildClient,
  spawnRoster,
  waitFor,
} from "../helpers/roster-process.js";
import { ADMIN_TOKEN } from "../helpers/constants.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";
import { USER_SCHEMA } from "../helpers/constants.js";

/**
 * Roster as a child process on a database of its own, reached through a TCP proxy the test controls, under a light
 * SCIM write load: its backends terminated (pg_terminate_backend) again and again, the server refusing connections,
 * then a black-holed network. The process must live through all of it, answer every request in bounded time with
 * a 201 or a 503 SCIM Error, recover by itself, and have lost no acknowledged write and no event.
 */
const WRITERS = 4;
/** A request that takes longer than this hangs: every wait on the database is bounded well below it. */
const MAX_REQUEST_MS = 10_000;
/** What Roster is told (ROSTER_DATABASE_*): small, so that the black hole is felt within the test. */
const CONNECT_TIMEOUT_MS = 1_000;
const STATEMENT_TIMEOUT_MS = 2_000;
const WEBHOOK_TIMEOUT_MS = 1_000;
/**
 * Every committed event reaches the receiver within this, well inside a claim's lease (the webhook timeout + 30 s):
 * a claim that committed while its answer was lost to a cut connection is released, not waited out.
 */
const DELIVERY_DEADLINE_MS = 15_000;

interface Outcome {
  readonly phase: string;
  readonly status: number | "dropped";
  readonly ms: number;
  readonly at: number;
}

const serverUrl = () => new URL(inject("databaseUrl"));
const dbName = `roster_faults_${randomBytes(4).toString("hex")}`;
let admin: pg.Client;
let proxy: DbProxy;
let roster: RosterProcess;
let receiver: WebhookReceiver;
let client: ChildClient;
let phase = "warm-up";
let writing = true;
const outcomes: Outcome[] = [];
const badBodies: string[] = [];
const acknowledged = new Set<string>();

beforeAll(async () => {
  admin = new pg.Client({ connectionString: serverUrl().toString() });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const source = serverUrl();
  const socketDir = source.searchParams.get("host");
  proxy = await startDbProxy(
    socketDir !== null
      ? { path: `${socketDir}/.s.PGSQL.${source.port}` }
      : { host: source.hostname, port: Number(source.port || 5432) },
  );
  const url = new URL(`postgres://127.0.0.1:${proxy.port}/${dbName}`);
  url.username = source.username;
  url.password = source.password;
  receiver = await startWebhookReceiver();
  roster = await spawnRoster({
    ROSTER_DATABASE_URL: url.toString(),
    ROSTER_LOG_LEVEL: "warn",
    ROSTER_DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
    ROSTER_DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
    ROSTER_WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
  });
  client = await seedChildClient(roster.url, { url: receiver.url, secret: "whsec_faults_0123456789abcdef" });
});

afterAll(async () => {
  writing = false;
  await roster?.stop();
  await receiver?.close();
  await proxy?.close();
  await admin?.query(`drop database if exists ${dbName} with (force)`);
  await admin?.end();
});

let sequence = 0;
async function writer(id: number): Promise<void> {
  while (writing) {
    const userName = `w${id}-${sequence++}@example.com`;
    const started = Date.now();
    const current = phase;
    try {
      const res = await fetch(`${client.base}/Users`, {
        method: "POST",
        headers: client.headers,
        body: JSON.stringify({ schemas: [USER_SCHEMA], userName }),
        signal: AbortSignal.timeout(MAX_REQUEST_MS * 2),
      });
      const text = await res.text();
      if (res.status === 201) acknowledged.add(userName);
      else if (res.status !== 503 || !isScimUnavailable(res, text)) badBodies.push(`${res.status} ${text}`);
      outcomes.push({ phase: current, status: res.status, ms: Date.now() - started, at: Date.now() });
    } catch {
      outcomes.push({ phase: current, status: "dropped", ms: Date.now() - started, at: Date.now() });
    }
    // Light load: a few dozen writes a second.
    await new Promise((r) => setTimeout(r, 20));
  }
}

function isScimUnavailable(res: Response, text: string): boolean {
  const body = JSON.parse(text) as { schemas?: string[]; status?: string };
  return (
    res.headers.get("content-type")?.startsWith("application/scim+json") === true &&
    body.schemas?.[0] === "urn:ietf:params:scim:api:messages:2.0:Error" &&
    body.status === "503"
  );
}

/** An admin call and the readiness probe during the outage: 200, or 503 in their own formats. */
async function probeOthers(): Promise<{ admin: number; adminStatus?: string; ready: number }> {
  const res = await fetch(`${roster.url}/v2alpha1/admin/organizations`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    signal: AbortSignal.timeout(MAX_REQUEST_MS),
  });
  const body = (await res.json()) as { error?: { status?: string } };
  const ready = await fetch(`${roster.url}/health/ready`, { signal: AbortSignal.timeout(MAX_REQUEST_MS) });
  await ready.arrayBuffer();
  return {
    admin: res.status,
    ...(body.error?.status === undefined ? {} : { adminStatus: body.error.status }),
    ready: ready.status,
  };
}

async function terminateBackends(): Promise<number> {
  const { rowCount } = await admin.query(
    "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()",
    [dbName],
  );
  return rowCount ?? 0;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Milliseconds from `since` to the first 201 answered after it. */
async function recoveredAfter(since: number): Promise<number> {
  await waitFor("a write to succeed again", async () => outcomes.some((o) => o.at > since && o.status === 201), 15_000);
  const first = outcomes.find((o) => o.at > since && o.status === 201);
  return (first?.at ?? since) - since;
}

describe.sequential("database faults under SCIM write load", () => {
  const writers: Promise<void>[] = [];
  const report: Record<string, unknown> = {};

  it("survives terminated backends: 503 or 201, never a dropped connection, then recovers", async () => {
    for (let i = 0; i < WRITERS; i++) writers.push(writer(i));
    await waitFor("warm-up writes", async () => acknowledged.size >= 20, 15_000);
    phase = "terminate";
    let terminated = 0;
    for (let round = 0; round < 5; round++) {
      terminated += await terminateBackends();
      await pause(300);
    }
    const faultEnd = Date.now();
    phase = "after-terminate";
    report.terminate = { backendsTerminated: terminated, recoveredMs: await recoveredAfter(faultEnd) };
    expect(terminated).toBeGreaterThan(0);
    expect(roster.exitStatus()).toBeUndefined();
  });

  it("answers 503 while the server refuses connections, in the SCIM, admin and health formats, then recovers", async () => {
    phase = "refused";
    await proxy.refuse();
    const faultStart = Date.now();
    await waitFor(
      "a 503 while refused",
      async () => outcomes.some((o) => o.at > faultStart && o.status === 503),
      10_000,
    );
    const others = await probeOthers();
    await pause(1000);
    await proxy.pass();
    const faultEnd = Date.now();
    phase = "after-refused";
    report.refused = { recoveredMs: await recoveredAfter(faultEnd) };
    expect(others).toEqual({ admin: 503, adminStatus: "UNAVAILABLE", ready: 503 });
    expect(roster.exitStatus()).toBeUndefined();
  });

  it("bounds every request while the network is black-holed, then recovers", async () => {
    phase = "black-holed";
    proxy.blackhole();
    const faultStart = Date.now();
    // Longer than the statement bound plus its margin: queries under way must be cut, not merely delayed.
    await waitFor(
      "a 503 while black-holed",
      async () => outcomes.some((o) => o.at > faultStart && o.status === 503),
      15_000,
    );
    await pause(STATEMENT_TIMEOUT_MS);
    await proxy.pass();
    const faultEnd = Date.now();
    phase = "after-black-hole";
    report.blackHoled = { seconds: (faultEnd - faultStart) / 1000, recoveredMs: await recoveredAfter(faultEnd) };
    expect(roster.exitStatus()).toBeUndefined();
  });

  it(
    "lost no acknowledged write and no event, and answered every request in bounded time",
    async () => {
      await pause(500);
      writing = false;
      await Promise.all(writers);
      expect(roster.exitStatus()).toBeUndefined();
      expect(await isReady(roster.url)).toBe(true);

      const stored = await storedUserNames();
      const lost = [...acknowledged].filter((u) => !stored.has(u));
      const deliveredMs = await waitFor(
        "every acknowledged user's user.created delivered",
        async () => [...acknowledged].every((u) => deliveredUserNames().has(u)),
        DELIVERY_DEADLINE_MS,
      );

      const byStatus: Record<string, number> = {};
      for (const o of outcomes) byStatus[String(o.status)] = (byStatus[String(o.status)] ?? 0) + 1;
      const faulted = outcomes.filter((o) => o.phase !== "warm-up");
      Object.assign(report, {
        requests: outcomes.length,
        byStatus,
        refusedDuringFaults: faulted.filter((o) => o.status === 503).length,
        maxRequestMs: Math.max(...outcomes.map((o) => o.ms)),
        acknowledgedWrites: acknowledged.size,
        lostWrites: lost.length,
        lostEvents: [...acknowledged].filter((u) => !deliveredUserNames().has(u)).length,
        eventsDeliveredMsAfterLoad: deliveredMs,
      });
      process.stdout.write(`database faults: ${JSON.stringify(report)}\n`);

      expect(lost).toEqual([]);
      expect(badBodies).toEqual([]);
      expect(outcomes.filter((o) => o.status === "dropped")).toEqual([]);
      expect(Math.max(...outcomes.map((o) => o.ms))).toBeLessThan(MAX_REQUEST_MS);
      expect(byStatus["503"] ?? 0).toBeGreaterThan(0);
      expect(Object.keys(byStatus).sort()).toEqual(["201", "503"]);
    },
    DELIVERY_DEADLINE_MS + 30_000,
  );
});

async function storedUserNames(): Promise<Set<string>> {
  const names = new Set<string>();
  let cursor = "";
  for (;;) {
    const res = await fetch(
      `${client.base}/Users?count=1000&attributes=userName&cursor=${encodeURIComponent(cursor)}`,
      { headers: client.headers },
    );
    expect(res.status).toBe(200);
    const page = (await res.json()) as { Resources?: Array<{ userName: string }>; nextCursor?: string };
    for (const r of page.Resources ?? []) names.add(r.userName);
    if (page.nextCursor === undefined) return names;
    cursor = page.nextCursor;
  }
}

function deliveredUserNames(): Set<string> {
  const names = new Set<string>();
  for (const r of receiver.received) {
    const body = r.json as { event?: string; data?: { raw?: { userName?: string } } };
    if (body.event === "user.created" && body.data?.raw?.userName !== undefined) names.add(body.data.raw.userName);
  }
  return names;
}
