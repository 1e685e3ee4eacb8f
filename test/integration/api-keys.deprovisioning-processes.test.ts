import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { createServerDatabase, type ServerDatabase } from "../helpers/database.js";
import { call as callUrl, type RosterProcess, startRosterProcess } from "../helpers/roster-process.js";

/**
 * Two real Roster processes on one PostgreSQL database, as a deployment runs them: whatever one instance answers
 * after the other's SCIM response was sent must already reflect it. Each process has its own memory (client cache
 * included); only the database is shared.
 */
let database: ServerDatabase;
const instances: RosterProcess[] = [];

beforeAll(async () => {
  database = await createServerDatabase();
  // Together, as a deployment starts them: one migrates, the other finds the schema ready once it holds the lock.
  const started = await Promise.allSettled([
    startRosterProcess(database.url, { ROSTER_LOG_LEVEL: "info" }),
    startRosterProcess(database.url, { ROSTER_LOG_LEVEL: "info" }),
  ]);
  for (const s of started) if (s.status === "fulfilled") instances.push(s.value);
  for (const s of started) if (s.status === "rejected") throw s.reason;
});
afterAll(async () => {
  await Promise.all(instances.map((i) => i.stop()));
  await database.drop();
});

const call = (i: RosterProcess, method: string, path: string, auth: string, body?: unknown) =>
  callUrl(i.url, method, path, auth, body);
const adminApi = (i: RosterProcess, method: string, path: string, body?: unknown) =>
  call(i, method, `/v2alpha1/admin${path}`, ADMIN_TOKEN, body);
const verify = async (i: RosterProcess, key: string) => (await adminApi(i, "POST", "/apiKeys:verify", { key })).json;

describe("two Roster processes on one database", () => {
  it("a deactivation, re-activation and deletion through one process is what the other answers next", async () => {
    const [a, b] = instances as [RosterProcess, RosterProcess];
    const org = (await adminApi(a, "POST", "/organizations", { name: "Processes" })).json.id as string;
    const client = (await adminApi(a, "POST", "/scimClients", { organization_id: org })).json;
    const scimBase = `/scim/${client.client_id as string}/v2`;
    const secret = client.secret as string;
    const created = await call(a, "POST", `${scimBase}/Users`, secret, {
      schemas: [USER_SCHEMA],
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
    const [a, b] = instances as [RosterProcess, RosterProcess];
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
    const [a, b] = instances as [RosterProcess, RosterProcess];
    const token = (await adminApi(a, "POST", "/adminTokens", { name: "ops", role: "viewer" })).json;
    expect((await call(b, "GET", "/v2alpha1/admin/organizations", token.token as string)).status).toBe(200);
    expect((await call(b, "POST", "/v2alpha1/admin/organizations", token.token as string, { name: "x" })).status).toBe(
      403,
    );
    expect((await adminApi(a, "DELETE", `/adminTokens/${token.id as string}`)).status).toBe(200);
    expect((await call(b, "GET", "/v2alpha1/admin/organizations", token.token as string)).status).toBe(401);
  });
});
