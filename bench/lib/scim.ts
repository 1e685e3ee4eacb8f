import type { Dispatcher } from "undici";
import { describeReply, type Endpoint, jsonOf, type RequestSpec, send } from "./http.js";

export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
export const PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

export interface ScimTarget extends Endpoint {
  readonly clientId: string;
  /** Path of the SCIM base URL, e.g. `/scim/<client_id>/v2`. */
  readonly base: string;
}

/** Creates an organization and returns its id, through the admin API as an operator would. */
export async function createOrganization(pool: Dispatcher, admin: Endpoint, name: string): Promise<string> {
  const reply = await send(pool, admin, {
    method: "POST",
    path: "/v2alpha1/admin/organizations",
    body: JSON.stringify({ name }),
  });
  const id = jsonOf(reply).id;
  if (reply.status !== 201 || typeof id !== "string") {
    throw new Error(`creating an organization failed: ${describeReply(reply)}`);
  }
  return id;
}

export async function createScimClient(
  pool: Dispatcher,
  admin: Endpoint,
  organizationId: string,
  secret: string,
  webhook?: { url: string; secret: string },
): Promise<ScimTarget> {
  const reply = await send(pool, admin, {
    method: "POST",
    path: "/v2alpha1/admin/scimClients",
    body: JSON.stringify({
      organization_id: organizationId,
      secret,
      ...(webhook === undefined ? {} : { webhook }),
      // BENCH_GUARD=off: to attribute what the deprovisioning guard costs a workload that deactivates (the default,
      // on, is what a deployment runs and what every published figure measures).
      ...(process.env.BENCH_GUARD === "off" ? { deprovisioning_guard: { enabled: false } } : {}),
    }),
  });
  const body = jsonOf(reply);
  const clientId = body.client_id;
  const baseUrl = body.scim_base_url;
  if (reply.status !== 201 || typeof clientId !== "string" || typeof baseUrl !== "string") {
    throw new Error(`creating a SCIM client failed: ${describeReply(reply)}`);
  }
  return {
    origin: admin.origin,
    clientId,
    base: new URL(baseUrl).pathname,
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/scim+json" },
  };
}

/** Switches a client's SCIM request log (`errors` is the default of a new client). */
export async function setRequestLog(pool: Dispatcher, admin: Endpoint, clientId: string, mode: string): Promise<void> {
  const reply = await send(pool, admin, {
    method: "PATCH",
    path: `/v2alpha1/admin/scimClients/${encodeURIComponent(clientId)}?update_mask=request_log`,
    body: JSON.stringify({ request_log: mode }),
  });
  if (reply.status !== 200) throw new Error(`setting request_log failed: ${describeReply(reply)}`);
}

/** The n-th seeded user's userName; also its primary email (identifiers are unique service-wide). */
export const seededUserName = (n: number): string => `user${n}@bench.example`;

export function userBody(userName: string, n: number, displayName?: string): Record<string, unknown> {
  return {
    schemas: [USER_SCHEMA],
    userName,
    name: { givenName: `Given${n}`, familyName: `Family${n}` },
    displayName: displayName ?? `User ${n}`,
    emails: [{ value: userName, type: "work", primary: true }],
    active: true,
  };
}

export function createUser(target: ScimTarget, userName: string, n: number): RequestSpec {
  return { method: "POST", path: `${target.base}/Users`, body: JSON.stringify(userBody(userName, n)) };
}

export function createGroup(target: ScimTarget, displayName: string): RequestSpec {
  return {
    method: "POST",
    path: `${target.base}/Groups`,
    body: JSON.stringify({ schemas: [GROUP_SCHEMA], displayName }),
  };
}

/**
 * RFC 7644 §3.5.2: replace `active` and `displayName`. `seq` makes every request of a measurement a real change and
 * `run` tells measurements apart: a displayName an earlier measurement already set would make the PATCH a no-op,
 * which Roster answers without writing.
 */
export function patchUser(target: ScimTarget, id: string, seq: number, run = ""): RequestSpec {
  return {
    method: "PATCH",
    path: `${target.base}/Users/${id}`,
    body: JSON.stringify({
      schemas: [PATCH_SCHEMA],
      Operations: [
        { op: "replace", path: "active", value: seq % 2 === 1 },
        { op: "replace", path: "displayName", value: `Patched ${seq}${run}` },
      ],
    }),
  };
}

/** A tag unique to one preparation of an operation, for values that must differ from every earlier measurement's. */
export const measurementTag = (): string => performance.now().toString(36).replace(".", "");

export function addMembers(target: ScimTarget, groupId: string, userIds: readonly string[]): RequestSpec {
  return {
    method: "PATCH",
    path: `${target.base}/Groups/${groupId}`,
    body: JSON.stringify({
      schemas: [PATCH_SCHEMA],
      Operations: [{ op: "add", path: "members", value: userIds.map((value) => ({ value, type: "User" })) }],
    }),
  };
}

export function listUsers(target: ScimTarget, query: Record<string, string>): RequestSpec {
  return { method: "GET", path: `${target.base}/Users?${new URLSearchParams(query).toString()}` };
}
