import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_CRASHES } from "../../src/storage/embedded-supervisor.js";
import {
  type ChildClient,
  isReady,
  type RosterProcess,
  seedChildClient,
  spawnRoster,
  startRoster,
  waitFor,
} from "../helpers/roster-process.js";
import { USER_SCHEMA } from "../helpers/constants.js";

/**
 * Roster on its default engine — an embedded PostgreSQL in ROSTER_DATA_DIR — as a child process: a second start on
 * the same directory, a kill -9 of the embedded PostgreSQL, and kill -9 of Roster (alone, then with its PostgreSQL).
 * One data directory throughout, so one initdb.
 */

let dir: string;
let first: RosterProcess;
let client: ChildClient;
const started: RosterProcess[] = [];
const written: string[] = [];

async function createUser(c: ChildClient, userName: string): Promise<number> {
  const res = await fetch(`${c.base}/Users`, {
    method: "POST",
    headers: c.headers,
    body: JSON.stringify({ schemas: [USER_SCHEMA], userName }),
  });
  await res.arrayBuffer();
  if (res.status === 201) written.push(userName);
  return res.status;
}

async function userNames(c: ChildClient): Promise<string[]> {
  const res = await fetch(`${c.base}/Users?count=100`, { headers: c.headers });
  const body = (await res.json()) as { Resources?: Array<{ userName: string }> };
  return (body.Resources ?? []).map((r) => r.userName).sort();
}

const postmasterPid = (): number =>
  Number.parseInt(readFileSync(join(dir, "pg", "postmaster.pid"), "utf8").split("\n")[0] ?? "", 10);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "roster-data-dir-faults-"));
  first = await spawnRoster({ ROSTER_DATA_DIR: dir });
  started.push(first);
  client = await seedChildClient(first.url);
  expect(await createUser(client, "before@example.com")).toBe(201);
});

afterAll(async () => {
  for (const p of started) await p.stop();
  // An orphaned PostgreSQL of a killed Roster is stopped by the next start; the last one's by its SIGTERM.
  await rm(dir, { recursive: true, force: true });
});

describe.sequential("the embedded data directory under faults", () => {
  it("refuses a second start while the first Roster lives, at once, and leaves the first one serving", async () => {
    const postgresBefore = postmasterPid();
    const second = startRoster({ ROSTER_DATA_DIR: dir });
    const status = await Promise.race([
      second.exited,
      new Promise<string>((r) => setTimeout(() => r("still running after 20 s"), 20_000)),
    ]);
    if (status === "still running after 20 s") await second.stop();
    expect(status).toBe(1);
    const output = second.output.join("\n");
    expect(output).toContain(`another Roster (pid ${first.pid}) is using ${resolve(dir)}`);
    expect(output).not.toContain("orphaned");
    expect(postmasterPid()).toBe(postgresBefore);

    expect(await isReady(first.url)).toBe(true);
    expect(await createUser(client, "after-second-start@example.com")).toBe(201);
    expect(first.exitStatus()).toBeUndefined();
  });

  it("restarts its embedded PostgreSQL after a kill -9 and keeps every acknowledged write", async () => {
    const killed = postmasterPid();
    process.kill(killed, "SIGKILL");
    let attempt = 0;
    // A fresh userName each time: a write answered 503 may still have committed.
    const ms = await waitFor(
      "Roster to serve again",
      // Until then a backend of the dead postmaster may still answer on a pooled connection.
      async () =>
        postmasterPid() !== killed && (await createUser(client, `after-pg-kill-${attempt++}@example.com`)) === 201,
      30_000,
    );
    expect(first.exitStatus()).toBeUndefined();
    expect(first.output.some((l) => l.includes("embedded PostgreSQL restarted"))).toBe(true);
    expect(await isReady(first.url)).toBe(true);
    expect(await userNames(client)).toEqual(expect.arrayContaining(written));
    process.stdout.write(`embedded PostgreSQL killed: Roster served again after ${ms} ms\n`);
  });

  it("recovers on the next start after a kill -9 of Roster alone, then of Roster and its PostgreSQL", async () => {
    first.child.kill("SIGKILL");
    await first.exited;
    // Its PostgreSQL lives on as an orphan; the lock file names a dead process.
    const second = await spawnRoster({ ROSTER_DATA_DIR: dir });
    started.push(second);
    expect(await userNames({ ...client, base: rebase(client, second) })).toEqual(expect.arrayContaining(written));

    const pg = postmasterPid();
    second.child.kill("SIGKILL");
    process.kill(pg, "SIGKILL");
    await second.exited;
    const third = await spawnRoster({ ROSTER_DATA_DIR: dir });
    started.push(third);
    const c = { ...client, base: rebase(client, third) };
    expect(await userNames(c)).toEqual(expect.arrayContaining(written));
    expect(await createUser(c, "after-both-killed@example.com")).toBe(201);
  });

  it("exits with a clear message, never half alive, when its PostgreSQL keeps dying", async () => {
    const last = started.at(-1);
    if (last === undefined) throw new Error("no Roster running");
    for (let crash = 1; crash <= MAX_CRASHES; crash++) {
      const killed = postmasterPid();
      process.kill(killed, "SIGKILL");
      await waitFor(
        "PostgreSQL restarted",
        async () => postmasterPid() !== killed && (await isReady(last.url)),
        30_000,
      );
    }
    process.kill(postmasterPid(), "SIGKILL");
    const status = await Promise.race([
      last.exited,
      new Promise<string>((r) => setTimeout(() => r("still running after 20 s"), 20_000)),
    ]);
    expect(status).toBe(1);
    expect(last.output.join("\n")).toContain(
      `roster: embedded PostgreSQL is gone and could not be restarted: embedded PostgreSQL exited ${MAX_CRASHES + 1} times`,
    );
  });
});

/** The same SCIM client on a restarted Roster (a new port). */
const rebase = (c: ChildClient, p: RosterProcess): string => `${p.url}/scim/${c.clientId}/v2`;
