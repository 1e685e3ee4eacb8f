import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ScimClient } from "../directory/scim-clients/types.js";
import { monotonicUuidv7 } from "./ids.js";
import type { Clock } from "../platform/clock.js";
import type { Logger } from "../platform/logger.js";
import type { Metrics } from "./metrics.js";
import { scimOperation } from "./operation.js";
import { loggedRequestBody, loggedResponseBody, redactQuery } from "./redact.js";
import type { NewRequestLogRow } from "./request-log/repo.js";
import type { RequestLogWriter } from "./request-log/writer.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The response body as sent, kept by reference for the request log (no copy, no serialisation). */
    observedPayload: unknown;
  }
}

export interface ScimObservabilityDeps {
  readonly metrics: Metrics;
  readonly writer: RequestLogWriter;
  readonly logger: Logger;
  readonly clock: Clock;
  /** A rejected secret leaves no client on the request; the log still files the attempt under its client. */
  readonly clients: { get(clientId: string): Promise<ScimClient | undefined> };
}

const SCIM_TYPE = /"scimType"\s*:\s*"([A-Za-z]+)"/;

/**
 * Metrics, a log line and the request log for every SCIM request, in the SCIM scope's onResponse hook — after the
 * answer left, so none of it is on the request's path. The body of the answer is kept by reference in onSend and
 * only redacted and copied when the client's request log keeps this request.
 */
export function installScimObservability(scope: FastifyInstance, deps: ScimObservabilityDeps): void {
  scope.decorateRequest("observedPayload", undefined);
  scope.addHook("onSend", (req, _reply, payload, done) => {
    req.observedPayload = payload;
    done(null, payload);
  });
  scope.addHook("onResponse", (req, reply, done) => {
    observe(req, reply, deps);
    done();
  });
}

function observe(req: FastifyRequest, reply: FastifyReply, deps: ScimObservabilityDeps): void {
  const status = reply.statusCode;
  const ms = reply.elapsedTime;
  const operation = scimOperation(req.method, req.routeOptions.url);
  deps.metrics.scimRequest(operation, status, ms / 1000);
  // Set by the SCIM scope's onRequest hook once the client is authenticated.
  const client = req.scimClient as ScimClient | undefined;
  const clientId = client?.clientId ?? (req.params as { clientId?: string } | undefined)?.clientId;
  if (status >= 400) {
    const scimType = scimTypeOf(req.observedPayload);
    deps.logger.info(
      { method: req.method, path: pathOf(req.url), status, scimType, clientId, operation, ms: round(ms) },
      "SCIM request failed",
    );
  } else if (deps.logger.isLevelEnabled("debug")) {
    deps.logger.debug(
      { method: req.method, path: pathOf(req.url), status, clientId, operation, ms: round(ms) },
      "SCIM request",
    );
  }
  if (client !== undefined) {
    record(req, reply, client, deps, ms);
  } else if (status === 401 && clientId !== undefined) {
    // A wrong or missing secret for a client that exists: what an operator most needs to see.
    deps.clients.get(clientId).then(
      (found) => {
        if (found !== undefined) record(req, reply, found, deps, ms);
      },
      () => {},
    );
  }
}

function record(req: FastifyRequest, reply: FastifyReply, client: ScimClient, deps: ScimObservabilityDeps, ms: number) {
  const status = reply.statusCode;
  const time = deps.clock.now().getTime() - Math.round(ms);
  deps.writer.count(client.clientId, status, time);
  const mode = client.requestLog;
  if (mode === "off" || (mode === "errors" && status < 400)) return;
  deps.writer.enqueue(
    requestLogEntry({
      client,
      time,
      method: req.method,
      url: req.url,
      status,
      ms,
      resourceId: resourceIdOf(req, reply),
      requestBody: req.body,
      responsePayload: req.observedPayload,
      userAgent: req.headers["user-agent"],
    }),
  );
}

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
}

/** One request log row: the path without its query, secrets redacted, bodies cut at 64 KiB. */
export function requestLogEntry(r: ObservedRequest): NewRequestLogRow {
  const q = r.url.indexOf("?");
  const request = loggedRequestBody(r.requestBody);
  const response = loggedResponseBody(r.responsePayload);
  return {
    id: monotonicUuidv7(r.time),
    client_id: r.client.clientId,
    organization_id: r.client.organizationId,
    time: new Date(r.time),
    method: r.method,
    path: q < 0 ? r.url : r.url.slice(0, q),
    query: q < 0 ? "" : redactQuery(r.url.slice(q + 1)),
    status: r.status,
    scim_type: r.status >= 400 ? (scimTypeOf(r.responsePayload) ?? null) : null,
    duration_ms: round(r.ms),
    resource_id: r.resourceId,
    request_body: request.text,
    request_truncated: request.truncated,
    response_body: response.text,
    response_truncated: response.truncated,
    user_agent: r.userAgent ?? null,
  };
}

/** The id in the path, or the one a create answered with (its Location). */
function resourceIdOf(req: FastifyRequest, reply: FastifyReply): string | null {
  const id = (req.params as { id?: string } | undefined)?.id;
  if (id !== undefined) return id;
  const location = reply.getHeader("location");
  if (typeof location !== "string") return null;
  const slash = location.lastIndexOf("/");
  return slash < 0 ? null : decodeURIComponent(location.slice(slash + 1));
}

function scimTypeOf(payload: unknown): string | undefined {
  if (typeof payload !== "string") return undefined;
  return SCIM_TYPE.exec(payload)?.[1];
}

const pathOf = (url: string): string => {
  const q = url.indexOf("?");
  return q < 0 ? url : url.slice(0, q);
};

const round = (ms: number): number => Math.round(ms * 100) / 100;
