import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ScimClient } from "../directory/scim-clients/types.js";
import type { Clock } from "../platform/clock.js";
import type { Logger } from "../platform/logger.js";
import type { Metrics } from "./metrics.js";
import { scimOperation } from "./operation.js";
import { roundMs as round, scimTypeOf } from "./request-log/entry.js";
import type { RequestLogWriter } from "./request-log/writer.js";
import type { BodyRedactor } from "./redact.js";

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
  /** The protocol's rules for finding secrets in its bodies (PATCH paths, the client's schema). */
  readonly redactor?: BodyRedactor;
}

/**
 * Metrics, a log line and the request log for every SCIM request, in the SCIM scope's onResponse hook — after the
 * answer left. The body of the answer is kept by reference in onSend; a request the client's log keeps is queued
 * as it is (references, no copy), and the background writer redacts, serialises and cuts it with its batch.
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
      { method: req.method, path: pathOf(req.url), status, scimType, clientId, operation, ms: round(ms), ip: req.ip },
      "SCIM request failed",
    );
  } else if (deps.logger.isLevelEnabled("debug")) {
    deps.logger.debug(
      { method: req.method, path: pathOf(req.url), status, clientId, operation, ms: round(ms), ip: req.ip },
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
  deps.writer.enqueue({
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
    clientIp: req.ip,
    ...(deps.redactor === undefined ? {} : { redactor: deps.redactor }),
  });
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

const pathOf = (url: string): string => {
  const q = url.indexOf("?");
  return q < 0 ? url : url.slice(0, q);
};
