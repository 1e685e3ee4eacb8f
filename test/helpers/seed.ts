import type { LightMyRequestResponse } from "fastify";
import { expect } from "vitest";
import type { TestApp } from "./app.js";
import { ADMIN_TOKEN, USER_SCHEMA } from "./constants.js";

export const adminHeaders = { authorization: `Bearer ${ADMIN_TOKEN}` };

export async function adminCall(
  t: TestApp,
  method: "GET" | "POST" | "PATCH" | "DELETE",
  url: string,
  payload?: unknown,
): Promise<LightMyRequestResponse> {
  return t.request({
    method,
    url: `/v2alpha1/admin${url}`,
    headers: adminHeaders,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });
}

/**
 * Sets a connection's deprovisioning guard (on, by default, with the settings given on top of a 1 %, one-hour
 * window); fails the test unless 200.
 */
export async function configureGuard(t: TestApp, clientId: string, settings: Record<string, unknown>): Promise<void> {
  const res = await adminCall(t, "PATCH", `/scimClients/${clientId}/deprovisioningGuard`, {
    enabled: true,
    share_percent: 1,
    window_seconds: 3600,
    ...settings,
  });
  expect(res.statusCode, res.body).toBe(200);
}

export interface SeededClient {
  readonly organizationId: string;
  readonly clientId: string;
  readonly secret: string;
  /** Path prefix of the client's SCIM base URL. */
  readonly base: string;
  readonly headers: Record<string, string>;
}

/** A fresh organization with one SCIM client, through the admin API as a user would. */
export async function seedClient(t: TestApp, client: Record<string, unknown> = {}): Promise<SeededClient> {
  const org = await adminCall(t, "POST", "/organizations", { name: "Acme" });
  if (org.statusCode !== 201) throw new Error(`organization create failed: ${org.body}`);
  return clientIn(t, org.json().id as string, client);
}

/** One more SCIM client in an existing organization, through the admin API. */
export async function clientIn(
  t: TestApp,
  organizationId: string,
  client: Record<string, unknown> = {},
): Promise<SeededClient> {
  const secret = `scim-secret-${Math.random().toString(36).slice(2)}`;
  const created = await adminCall(t, "POST", "/scimClients", { organization_id: organizationId, secret, ...client });
  if (created.statusCode !== 201) throw new Error(`client create failed: ${created.body}`);
  const clientId = created.json().client_id as string;
  return {
    organizationId,
    clientId,
    secret,
    base: `/scim/${clientId}/v2`,
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/scim+json" },
  };
}

/** SCIM request with the client's credentials. */
export function scim(
  t: TestApp,
  c: SeededClient,
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
  path: string,
  payload?: unknown,
): Promise<LightMyRequestResponse> {
  return t.request({
    method,
    url: `${c.base}${path}`,
    headers: c.headers,
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  });
}

/**
 * Resolves once the connection is active: its first successful SCIM request marks it so (and writes
 * `connection.activated`) after the answer, so a test that counts that event waits for it, bounded.
 */
export async function activated(t: TestApp, c: SeededClient, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await adminCall(t, "GET", `/scimClients/${c.clientId}`);
    if (res.statusCode === 200 && res.json().activated_time !== null) return;
    if (Date.now() > until) throw new Error(`connection ${c.clientId} not active after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

let users = 0;

/**
 * POST /Users of a user whose userName no other call gives (`${prefix}N@example.com`), with `body` on top (which may
 * name its own userName); fails the test unless 201, and returns the created user.
 */
export async function createUser(t: TestApp, c: SeededClient, body: Record<string, unknown> = {}, prefix = "user") {
  const res = await scim(t, c, "POST", "/Users", {
    schemas: [USER_SCHEMA],
    userName: `${prefix}${++users}@example.com`,
    ...body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}
