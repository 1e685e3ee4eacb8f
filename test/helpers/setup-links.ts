import { expect } from "vitest";
import type { TestApp } from "./app.js";
import { adminCall, type SeededClient } from "./seed.js";

export interface CreatedSetupLink {
  readonly id: string;
  readonly url: string;
  readonly expire_time: string;
  readonly state: string;
}

/** A setup link of the organization through the admin API (201 checked); `extra` adds fields to the request. */
export async function setupLinkFor(
  t: TestApp,
  organizationId: string,
  extra: Record<string, unknown> = {},
): Promise<CreatedSetupLink> {
  const res = await adminCall(t, "POST", "/setupLinks", {
    organization_id: organizationId,
    intent: "directory_sync",
    ...extra,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as CreatedSetupLink;
}

/** Opens the link as a browser would: the cookie it sets, and the session's CSRF token. */
export async function openSetupLink(app: TestApp, url: string) {
  const res = await app.request({ method: "GET", url: new URL(url).pathname });
  expect(res.statusCode, res.body).toBe(303);
  const setCookie = String(res.headers["set-cookie"]);
  const cookie = setCookie.split(";")[0] ?? "";
  const session = await app.request({ method: "GET", url: "/v2alpha1/admin/setupSession", headers: { cookie } });
  expect(session.statusCode, session.body).toBe(200);
  return { res, setCookie, cookie, csrf: session.json().csrf_token as string, session: session.json() };
}

/** The headers of a setup session's request: its cookie, and its CSRF token for a write. */
export const asSession = (cookie: string, csrf?: string) => ({
  cookie,
  ...(csrf === undefined ? {} : { "x-csrf-token": csrf }),
});

/**
 * A connection the customer's IT admin creates through an opened link (201 checked): the answer, and the connection
 * as a SCIM client with the secret shown once.
 */
export async function connectThroughLink(
  t: TestApp,
  organizationId: string,
  session: { cookie: string; csrf: string },
  name = "Okta",
) {
  const res = await t.request({
    method: "POST",
    url: "/v2alpha1/admin/scimClients",
    headers: { ...asSession(session.cookie, session.csrf), "content-type": "application/json" },
    payload: { organization_id: organizationId, name },
  });
  expect(res.statusCode, res.body).toBe(201);
  const clientId = res.json().client_id as string;
  const secret = res.json().secret as string;
  const client: SeededClient = {
    organizationId,
    clientId,
    secret,
    base: `/scim/${clientId}/v2`,
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/scim+json" },
  };
  return { res, client };
}
