/** The admin API as the portal uses it: the token from sessionStorage, errors as AdminApiError. */

const TOKEN_KEY = "roster.adminToken";
export const ADMIN = "/v2alpha1/admin";

export const token = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (value: string) => sessionStorage.setItem(TOKEN_KEY, value),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

export class AdminApiError extends Error {
  readonly httpStatus: number;
  readonly status: string;
  readonly details: readonly unknown[];
  constructor(httpStatus: number, status: string, message: string, details: readonly unknown[] = []) {
    super(message);
    this.httpStatus = httpStatus;
    this.status = status;
    this.details = details;
  }
}

/** Called when the server says the token is no longer valid: the app signs out. */
let onUnauthenticated: () => void = () => {};
export const setUnauthenticatedHandler = (handler: () => void) => {
  onUnauthenticated = handler;
};

type Method = "GET" | "POST" | "PATCH" | "DELETE";

/**
 * A setup link's session (the view below /portal/setup) authenticates with its HttpOnly cookie, never the admin
 * token, and sends its CSRF token with every write; `csrf` is empty until the session endpoint has answered.
 */
const setup = { on: false, csrf: "" };
export const setupSession = {
  enter: () => {
    setup.on = true;
  },
  setCsrf: (csrf: string) => {
    setup.csrf = csrf;
  },
};

function credentialsOf(method: Method, tokenOverride: string | undefined): Record<string, string> {
  if (setup.on) return method === "GET" || setup.csrf === "" ? {} : { "x-csrf-token": setup.csrf };
  const bearer = tokenOverride ?? token.get();
  if (bearer === null) {
    onUnauthenticated();
    throw new AdminApiError(401, "UNAUTHENTICATED", "sign in first");
  }
  return { authorization: `Bearer ${bearer}` };
}

/** One admin call; `tokenOverride` is for the sign-in check, before the token is kept. */
export async function call<T>(method: Method, path: string, body?: unknown, tokenOverride?: string): Promise<T> {
  const headers = credentialsOf(method, tokenOverride);
  if (body !== undefined) headers["content-type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(`${ADMIN}${path}`, {
      method,
      headers,
      credentials: setup.on ? "same-origin" : "omit",
      cache: "no-store",
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new AdminApiError(0, "UNAVAILABLE", "Roster did not answer: check that it is running");
  }
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text === "" ? null : JSON.parse(text);
  } catch {
    json = null;
  }
  if (!res.ok) {
    const error = (json as { error?: { status?: string; message?: string; details?: unknown[] } } | null)?.error;
    if (res.status === 401 && tokenOverride === undefined) onUnauthenticated();
    throw new AdminApiError(
      res.status,
      error?.status ?? "UNKNOWN",
      error?.message ?? `request failed with HTTP ${res.status}`,
      error?.details ?? [],
    );
  }
  return json as T;
}

export const q = (params: Record<string, string | number | boolean | undefined>): string => {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") search.set(k, String(v));
  const s = search.toString();
  return s === "" ? "" : `?${s}`;
};

export const enc = encodeURIComponent;

export interface Organization {
  id: string;
  name: string;
  create_time: string;
}

/** What a group PATCH without attributes/excludedAttributes answers. */
export type GroupPatchResponse = "no_content" | "full";

/** A connection as an admin token reads it; a setup session's answers leave out webhook, tenant, product and log_webhook_events. */
export interface Connection {
  client_id: string;
  organization_id: string;
  name: string;
  scim_base_url: string;
  auto_link: boolean;
  mapping: string | null;
  tenant: string;
  product: string;
  webhook: { url: string; secret_set: boolean; retry: "none" | "backoff" } | null;
  log_webhook_events: boolean;
  request_log: RequestLogMode;
  extensions: unknown[];
  unknown_extensions: "reject" | "store";
  authentication_methods: AuthMethod[];
  basic_username: string;
  oauth_token_url: string;
  service_provider_config_pagination: boolean;
  group_patch_response: GroupPatchResponse;
  secret_rotate_time: string | null;
  previous_secret_expire_time: string | null;
  previous_secret_last_used_time: string | null;
  /** When the connection first answered a SCIM request with success; null until then. */
  activated_time: string | null;
  create_time: string;
  update_time: string;
  /** Only in the single-connection read: its health over the last 24 hours. */
  last_request_time?: string | null;
  request_count_24h?: number;
  error_count_24h?: number;
  /** Only in the single-connection read: the deprovisioning guard's settings and state. */
  deprovisioning_guard?: DeprovisioningGuard;
  secret?: string;
}

export interface DeprovisioningGuard {
  enabled: boolean;
  share_percent: number;
  min_count: number;
  window_seconds: number;
  state: "FLOWING" | "HOLDING";
  tripped_time: string | null;
  window_count: number;
  held_events: number;
  held_users: number;
  held_users_still_inactive: number;
  held_sample: { id: string; email: string; event: string }[];
}

export type RequestLogMode = "errors" | "all" | "off";

/** How an identity provider may authenticate to a connection (docs/scim-authentication.md). */
export type AuthMethod = "bearer" | "basic" | "client_credentials";

/** One SCIM request of a connection, as the request log keeps it (bodies only in the single read). */
export interface ScimRequest {
  id: string;
  client_id: string;
  time: string;
  method: string;
  path: string;
  query: string | null;
  status: number;
  scim_type: string | null;
  duration_ms: number;
  resource_id: string | null;
  user_agent: string | null;
  request_body?: unknown;
  request_truncated?: boolean;
  response_body?: unknown;
  response_truncated?: boolean;
}

/** One event of the events feed. */
export interface FeedEvent {
  id: string;
  event: string;
  organization_id: string;
  directory_id: string;
  create_time: string;
  data: Record<string, unknown>;
}

export interface AdminToken {
  id: string;
  name: string;
  role: "admin" | "viewer";
  state: string;
  expire_time: string | null;
  revoke_time: string | null;
  last_used_time: string | null;
  create_time: string;
  token?: string;
}

export interface DirectoryUser {
  id: string;
  user_name: string;
  external_id: string | null;
  display_name: string | null;
  email: string | null;
  active: boolean;
  groups: { id: string; display_name: string }[];
  create_time: string;
  update_time: string;
  scim?: Record<string, unknown>;
  traits?: Record<string, unknown>;
  has_password?: boolean;
}

export interface DirectoryGroup {
  id: string;
  display_name: string;
  external_id: string | null;
  member_count: number;
  create_time: string;
  update_time: string;
  members?: { value: string; display: string; type: string }[];
}

export interface WebhookEvent {
  id: string;
  event_id: string;
  directory_id: string;
  event: string;
  success: boolean;
  status_code: number | null;
  error: string | null;
  duration_ms: number | null;
  resend: boolean;
  attempt: number;
  state: "delivered" | "failed" | "retrying" | string;
  next_attempt_time: string | null;
  attempt_time: string;
  payload: unknown;
  /** The headers sent: content type, webhook-id, webhook-timestamp and the signatures (never the secret). */
  request_headers: Record<string, string>;
  /** The receiver's answer, its first 4 KiB; null when none was read. */
  response_body: string | null;
  response_body_truncated: boolean;
}

export interface RateLimit {
  name: string;
  limit: number;
  period: string;
}

export interface ApiKey {
  key_id: string;
  prefix?: string;
  name: string;
  organization_id: string | null;
  actor_id: string | null;
  scopes: string[];
  metadata: Record<string, unknown>;
  rate_limits: RateLimit[];
  expire_time: string | null;
  state: "ACTIVE" | "EXPIRED" | "REVOKED" | "SUSPENDED";
  /** Why a SUSPENDED key is suspended: its actor identity is inactive. */
  suspend_reason?: string;
  revoke_reason?: string | null;
  revoke_time: string | null;
  create_time: string;
  update_time: string;
  secret?: string;
  previous_secret_expire_time?: string;
}

import { DIRECTORY_EVENT_KINDS } from "../../../directory/event-kinds.js";

/** The server's own list of event kinds (bundled in: a module without imports), as a filter's choices. */
export const EVENT_KIND_OPTIONS: readonly (readonly [string, string])[] = [
  ["", "All types"],
  ...DIRECTORY_EVENT_KINDS.map((k) => [k, k] as const),
  ["webhook.test", "webhook.test (test events)"],
];
