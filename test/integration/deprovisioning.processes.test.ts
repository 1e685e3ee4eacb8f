import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";

/**
 * Two real Roster processes on one PostgreSQL database, as a deployment runs them: whatever one instance answers
 * after the other's SCIM response was sent must already reflect it. Each process has its own memory (client cache
 * included); only the database is shared.
 */
const ADMIN_TOKEN = "process-test-admin-token-0123456789";
const SECRETS = "process-test-roster-secret-0123456789abcdef";
const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

interface Instance {
  readonly url: string;
  readonly child: ChildProcess;
}

let databaseUrl: string;
let databaseName: string;
const instances: Instance[] = [];

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: inject("databaseUrl") });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** Starts `npm start`'s entry point and resolves with its base URL once it logs that it is ready. */
function start(): Promise<Instance> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/server.ts"], {
    env: {
      ...process.env,
      ROSTER_DATABASE_URL: databaseUrl,
      ROSTER_SECRETS: SECRETS,
      ROSTER_ADMIN_TOKEN: ADMIN_TOKEN,
      ROSTER_PORT: "0",
      ROSTER_LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`Roster did not start:\n${out}`)), 90_000);
    child.on("exit", (code) => reject(new Error(`Roster exited with ${code}:\n${out}`)));
    child.stderr?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      for (const line of out.split("\n")) {
        if (!line.includes('"Roster ready"')) continue;
        clearTimeout(timer);
        resolve({ url: (JSON.parse(line) as { url: string }).url, child });
      }
    });
  });
}

function stop(instance: Instance): Promise<void> {
  return new Promise((resolve) => {
    if (instance.child.exitCode !== null) return resolve();
    instance.child.once("exit", () => resolve());
    instance.child.kill("SIGTERM");
  });
}

beforeAll(async () => {
  databaseName = `t_processes_${randomBytes(5).toString("hex")}`;
  await admin(`create database ${databaseName}`);
  const u = new URL(inject("databaseUrl"));
  u.pathname = `/${databaseName}`;
  databaseUrl = u.toString();
  // One after the other: the first migrates, the second finds the schema ready.
  instances.push(await start());
  instances.push(await start());
});
afterAll(async () => {
  await Promise.all(instances.map(stop));
  await admin(`drop database if exists ${databaseName}`);
});

async function call(
  instance: Instance,
  method: string,
  path: string,
  auth: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${instance.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${auth}`,
      ...(body === undefined
        ? {}
        : { "content-type": path.startsWith("/scim/") ? "application/scim+json" : "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

const adminApi = (i: Instance, method: string, path: string, body?: unknown) =>
  call(i, method, `/v2alpha1/admin${path}`, ADMIN_TOKEN, body);
const verify = async (i: Instance, key: string) => (await adminApi(i, "POST", "/apiKeys:verify", { key })).json;

describe("two Roster processes on one database", () => {
  it("a deactivation, re-activation and deletion through one process is what the other answers next", async () => {
    const [a, b] = instances as [Instance, Instance];
    const org = (await adminApi(a, "POST", "/organizations", { name: "Processes" })).json.id as string;
    const client = (await adminApi(a, "POST", "/scimClients", { organization_id: org })).json;
    const scimBase = `/scim/${client.client_id as string}/v2`;
    const secret = client.secret as string;
    const created = await call(a, "POST", `${scimBase}/Users`, secret, {
      schemas: [USER],
      userName: "ada@example.com",
    });
    expect(created.status).toBe(201);
    const userId = created.json.id as string;
    const key = (await adminApi(a, "POST", "/issuedApiKeys", { name: "k", organization_id: org, actor_id: userId }))
      .json.secret as string;
    expect(await verify(b, key)).toMatchObject({ valid: true });

    const deactivate = await call(a, "PATCH", `${scimBase}/Users/${userId}`, secret, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "active", value: false }],
    });
    expect(deactivate.status).toBe(200);
    expect(await verify(b, key)).toMatchObject({ valid: false, reason: "ACTOR_INACTIVE" });

    const reactivate = await call(b, "PATCH", `${scimBase}/Users/${userId}`, secret, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "active", value: true }],
    });
    expect(reactivate.status).toBe(200);
    expect(await verify(a, key)).toMatchObject({ valid: true });

    expect((await call(b, "DELETE", `${scimBase}/Users/${userId}`, secret)).status).toBe(204);
    expect(await verify(a, key)).toMatchObject({ valid: false, reason: "REVOKED", revoke_reason: "ACTOR_DELETED" });
  });

  it("a SCIM secret rotated through one process works on the other at once, the old one through the grace", async () => {
    const [a, b] = instances as [Instance, Instance];
    const org = (await adminApi(a, "POST", "/organizations", { name: "Rotation" })).json.id as string;
    const client = (await adminApi(a, "POST", "/scimClients", { organization_id: org })).json;
    const scimUsers = `/scim/${client.client_id as string}/v2/Users`;
    // b caches the client with its first secret.
    expect((await call(b, "GET", scimUsers, client.secret as string)).status).toBe(200);
    const rotated = await adminApi(a, "POST", `/scimClients/${client.client_id as string}:rotateSecret`, {
      grace_period: "600s",
    });
    expect(rotated.status).toBe(200);
    expect((await call(b, "GET", scimUsers, rotated.json.secret as string)).status).toBe(200);
    expect((await call(b, "GET", scimUsers, client.secret as string)).status).toBe(200);
    expect((await call(b, "GET", scimUsers, "not-a-secret-of-this-client")).status).toBe(401);
  });

  it("a named admin token revoked through one process is refused by the other", async () => {
    const [a, b] = instances as [Instance, Instance];
    const token = (await adminApi(a, "POST", "/adminTokens", { name: "ops", role: "viewer" })).json;
    expect((await call(b, "GET", "/v2alpha1/admin/organizations", token.token as string)).status).toBe(200);
    expect((await call(b, "POST", "/v2alpha1/admin/organizations", token.token as string, { name: "x" })).status).toBe(
      403,
    );
    expect((await adminApi(a, "DELETE", `/adminTokens/${token.id as string}`)).status).toBe(200);
    expect((await call(b, "GET", "/v2alpha1/admin/organizations", token.token as string)).status).toBe(401);
  });
});
