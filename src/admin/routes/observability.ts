import type { FastifyInstance } from "fastify";
import { invalidArgument, notFound } from "../errors.js";
import { first, pageOf, parsePageRequest, requireUuid } from "../paging.js";
import type { AuditRepo, AuditRow } from "../../observability/audit/repo.js";
import type {
  RequestLogEntry,
  RequestLogFilter,
  RequestLogRepo,
  RequestLogSummary,
} from "../../observability/request-log/repo.js";

type JsonObject = Record<string, unknown>;

export interface ObservabilityRouteDeps {
  readonly requestLog: RequestLogRepo;
  readonly audit: AuditRepo;
  /** Whether a SCIM client exists (its request log is then readable, even when empty). */
  readonly clientExists: (clientId: string) => Promise<boolean>;
}

const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]);

/** The request log of a connection and the admin audit trail, newest first, AIP-158 pages. */
export function registerObservabilityRoutes(scope: FastifyInstance, deps: ObservabilityRouteDeps): void {
  scope.get<{ Params: { clientId: string } }>("/scimClients/:clientId/requests", async (req) => {
    const query = req.query as Record<string, unknown>;
    const page = parsePageRequest(query);
    const filter = parseFilter(query);
    const before = page.after === undefined ? undefined : requireUuid(page.after, "page_token");
    if (!(await deps.clientExists(req.params.clientId))) {
      throw notFound(`SCIM client ${req.params.clientId} does not exist`);
    }
    const rows = await deps.requestLog.list(req.params.clientId, filter, before, page.pageSize + 1);
    const { items, next_page_token } = pageOf(rows, page.pageSize, (r) => r.id);
    return { requests: items.map(summaryJson), next_page_token };
  });

  scope.get<{ Params: { clientId: string; id: string } }>("/scimClients/:clientId/requests/:id", async (req) => {
    const id = requireUuid(req.params.id, "request id");
    const row = await deps.requestLog.get(req.params.clientId, id);
    if (row === undefined) throw notFound(`request ${id} of SCIM client ${req.params.clientId} does not exist`);
    return requestJson(row);
  });

  scope.get("/auditLog", async (req) => {
    const query = req.query as Record<string, unknown>;
    const page = parsePageRequest(query);
    const target = first(query.target);
    const before = page.after === undefined ? undefined : requireUuid(page.after, "page_token");
    const rows = await deps.audit.list(
      target === undefined || target === "" ? undefined : target,
      before,
      page.pageSize + 1,
    );
    const { items, next_page_token } = pageOf(rows, page.pageSize, (r) => r.id);
    return { entries: items.map(auditJson), next_page_token };
  });
}

function parseFilter(query: Record<string, unknown>): RequestLogFilter {
  const filter: { status?: { min: number; max: number }; method?: string; resourceId?: string } = {};
  const status = first(query.status);
  if (status !== undefined && status !== "") {
    const cls = /^([1-5])xx$/i.exec(status);
    if (cls !== null) filter.status = { min: Number(cls[1]) * 100, max: Number(cls[1]) * 100 + 99 };
    else if (/^[1-5]\d\d$/.test(status)) filter.status = { min: Number(status), max: Number(status) };
    else throw invalidArgument("status must be a class (2xx, 4xx, 5xx) or a three-digit code");
  }
  const method = first(query.method);
  if (method !== undefined && method !== "") {
    const upper = method.toUpperCase();
    if (!METHODS.has(upper)) throw invalidArgument(`method must be one of ${[...METHODS].join(", ")}`);
    filter.method = upper;
  }
  const resourceId = first(query.resource_id);
  if (resourceId !== undefined && resourceId !== "") {
    if (resourceId.length > 256) throw invalidArgument("resource_id is too long");
    filter.resourceId = resourceId;
  }
  return filter;
}

function summaryJson(r: RequestLogSummary): JsonObject {
  return {
    id: r.id,
    client_id: r.client_id,
    organization_id: r.organization_id,
    time: r.time.toISOString(),
    method: r.method,
    path: r.path,
    query: r.query,
    status: r.status,
    scim_type: r.scim_type,
    duration_ms: r.duration_ms,
    resource_id: r.resource_id,
    user_agent: r.user_agent,
    client_ip: r.client_ip,
  };
}

function requestJson(r: RequestLogEntry): JsonObject {
  return {
    ...summaryJson(r),
    request_body: bodyJson(r.request_body, r.request_truncated),
    request_truncated: r.request_truncated,
    response_body: bodyJson(r.response_body, r.response_truncated),
    response_truncated: r.response_truncated,
  };
}

/** A stored body as JSON when it is whole JSON; a cut or foreign body as the text kept. */
function bodyJson(text: string | null, truncated: boolean): unknown {
  if (text === null) return null;
  if (truncated) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

const auditJson = (r: AuditRow): JsonObject => ({
  id: r.id,
  time: r.time.toISOString(),
  actor: { id: r.actor_id, name: r.actor_name },
  action: r.action,
  target: r.target,
  changed_fields: r.changed_fields,
  status: r.status,
});
