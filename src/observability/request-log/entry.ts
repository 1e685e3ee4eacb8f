import type { ScimClient } from "../../directory/scim-clients/types.js";
import type { MonotonicIds } from "../ids.js";
import { type BodyRedactor, KEY_REDACTOR, loggedRequestBody, loggedResponseBody, redactQuery } from "../redact.js";
import type { RequestLogEntry } from "./repo.js";

/**
 * A SCIM request as its onResponse hook saw it: the parsed request body and the payload sent, both by reference (no
 * copy, no serialisation, no redaction on the request's path). The background writer turns it into an entry.
 */
export interface ObservedRequest {
  readonly client: Pick<ScimClient, "clientId" | "organizationId">;
  readonly time: number;
  readonly method: string;
  readonly url: string;
  readonly status: number;
  readonly ms: number;
  readonly resourceId: string | null;
  readonly requestBody: unknown;
  readonly responsePayload: unknown;
  readonly userAgent: string | undefined;
  /** `request.ip`: the peer, or the client a trusted proxy named in X-Forwarded-For (ROSTER_TRUST_PROXY). */
  readonly clientIp?: string;
  /** How secrets are found in this client's bodies (the SCIM layer's rules); default: by key name. */
  readonly redactor?: BodyRedactor;
}

/** An IPv6 address with a zone index fits in well under this. */
const MAX_IP_LENGTH = 64;

const SCIM_TYPE = /"scimType"\s*:\s*"([A-Za-z]+)"/;

/** One request log entry: the path without its query, secrets redacted, bodies cut at 64 KiB. */
export function requestLogEntry(r: ObservedRequest, ids: MonotonicIds): RequestLogEntry {
  const q = r.url.indexOf("?");
  const context = { client: r.client, url: r.url, redactor: r.redactor ?? KEY_REDACTOR };
  const request = loggedRequestBody(r.requestBody, context);
  const response = loggedResponseBody(r.responsePayload, context);
  return {
    id: ids(r.time),
    client_id: r.client.clientId,
    organization_id: r.client.organizationId,
    time: new Date(r.time),
    method: r.method,
    path: q < 0 ? r.url : r.url.slice(0, q),
    query: q < 0 ? "" : redactQuery(r.url.slice(q + 1), context.redactor.suspect(r.client)),
    status: r.status,
    scim_type: r.status >= 400 ? (scimTypeOf(r.responsePayload) ?? null) : null,
    duration_ms: roundMs(r.ms),
    resource_id: r.resourceId,
    request_body: request.text,
    request_truncated: request.truncated,
    response_body: response.text,
    response_truncated: response.truncated,
    user_agent: r.userAgent ?? null,
    // A believed X-Forwarded-For entry is whatever the proxy passed on: kept, but never longer than an address.
    client_ip: r.clientIp === undefined || r.clientIp === "" ? null : r.clientIp.slice(0, MAX_IP_LENGTH),
  };
}

/** The `scimType` of a SCIM error body as sent. */
export function scimTypeOf(payload: unknown): string | undefined {
  if (typeof payload !== "string") return undefined;
  return SCIM_TYPE.exec(payload)?.[1];
}

export const roundMs = (ms: number): number => Math.round(ms * 100) / 100;
