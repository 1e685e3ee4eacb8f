import type { Socket } from "node:net";
import { maxHeaderSize, STATUS_CODES } from "node:http";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type AdminStatus, errorBody as adminErrorBody } from "./admin/errors.js";
import { type DatabaseFaults, faultOf } from "./platform/faults.js";
import { pathOnly } from "./platform/internal-error.js";
import type { Logger } from "./platform/logger.js";
import type { ScimType } from "./scim/errors.js";
import { errorBody as scimErrorBody, SCIM_CONTENT_TYPE } from "./scim/render.js";

/**
 * Answers made before (or outside) the SCIM and admin scopes — a URL the router cannot decode, a path parameter
 * over the router's limit, a request line or headers over Node's limit, a path under no scope — still speak the
 * protocol of the path they were sent to: a SCIM Error under /scim/, the admin error body under /v2alpha1/admin.
 */

type Protocol = "scim" | "admin" | "other";

const protocolOf = (url: string): Protocol => {
  const path = url.toLowerCase();
  if (path === "/scim" || path.startsWith("/scim/")) return "scim";
  if (path === "/v2alpha1/admin" || path.startsWith("/v2alpha1/admin/")) return "admin";
  return "other";
};

/** Paths the SCIM and admin scopes answer themselves (their own 404s included); routing is case-insensitive. */
const SCOPED = /^\/(scim\/[^/?]+\/v2|v2alpha1\/admin)(\/|\?|$)/i;

const ADMIN_STATUS: Record<number, AdminStatus> = {
  401: "UNAUTHENTICATED",
  404: "NOT_FOUND",
  500: "INTERNAL",
  503: "UNAVAILABLE",
};

interface Rendered {
  readonly contentType: string;
  readonly body: string;
}

function render(protocol: Protocol, status: number, message: string, scimType?: ScimType): Rendered {
  if (protocol === "scim") {
    return { contentType: SCIM_CONTENT_TYPE, body: JSON.stringify(scimErrorBody(status, scimType, message)) };
  }
  if (protocol === "admin") {
    const name = ADMIN_STATUS[status] ?? (status >= 500 ? "INTERNAL" : "INVALID_ARGUMENT");
    return {
      contentType: "application/json; charset=utf-8",
      body: JSON.stringify(adminErrorBody(status, name, message)),
    };
  }
  const body = { statusCode: status, error: STATUS_CODES[status] ?? "Error", message };
  return { contentType: "application/json; charset=utf-8", body: JSON.stringify(body) };
}

const send = (reply: FastifyReply, status: number, rendered: Rendered): FastifyReply =>
  reply.code(status).type(rendered.contentType).send(rendered.body);

/** Fastify's `frameworkErrors`: the router could not take the URL apart. */
export function frameworkErrors(error: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const protocol = protocolOf(req.url);
  if (error.code === "FST_ERR_MAX_PARAM_LENGTH") {
    // No id, client id or key of Roster is that long: nothing is there.
    send(reply, 404, render(protocol, 404, "not found: a path segment is longer than 100 characters"));
    return;
  }
  if (error.code === "FST_ERR_BAD_URL") {
    send(reply, 400, render(protocol, 400, "the URL is not valid percent-encoding", "invalidSyntax"));
    return;
  }
  send(reply, 500, render(protocol, 500, "internal server error"));
}

const REQUEST_LINE = /^[A-Za-z]+ (\S+)/;

/**
 * Node's `clientError`: the request never became one (headers too large, a malformed request line, a timeout).
 * The protocol comes from the request line when the bytes hold it; the connection closes after the answer.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException & { rawPacket?: unknown }, socket: Socket): void {
  if (error.code === "ECONNRESET" || socket.destroyed || !socket.writable) return;
  const raw = Buffer.isBuffer(error.rawPacket) ? error.rawPacket : undefined;
  const head = raw?.subarray(0, 256).toString("latin1") ?? "";
  const target = REQUEST_LINE.exec(head)?.[1] ?? "";
  let status = 400;
  let message = "the request is malformed";
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    status = 408;
    message = "the request took too long to arrive";
  } else if (error.code === "HPE_HEADER_OVERFLOW") {
    // Node counts the request line with the headers: a line that alone fills the limit is a URL too long.
    const lineEnd = raw?.indexOf("\r\n") ?? -1;
    const urlTooLong = lineEnd === -1 || lineEnd >= maxHeaderSize;
    status = urlTooLong ? 414 : 431;
    message = urlTooLong ? "the URL is too long" : "the request headers are too large";
  }
  const rendered = render(protocolOf(target), status, message);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}\r\nContent-Type: ${rendered.contentType}\r\n` +
      `Content-Length: ${Buffer.byteLength(rendered.body)}\r\nConnection: close\r\n\r\n${rendered.body}`,
  );
}

/** The root scope: 404s and errors of paths under no scope, in the protocol their path suggests. */
export function installEdge(app: FastifyInstance, logger: Logger, faults: DatabaseFaults): void {
  // An unknown path outside the scopes is 404 before its body is read (the scopes do the same after auth).
  // A callback, not an async function: every request passes here, and a promise per request is Fastify's to await.
  app.addHook("onRequest", (req, reply, done) => {
    if (req.is404 && !SCOPED.test(req.url)) {
      const protocol = protocolOf(req.url);
      // Answered here: the hook does not call done, so nothing after it runs.
      send(reply, 404, render(protocol, 404, `no endpoint ${req.method} ${pathOnly(req.url)}`));
      return;
    }
    done();
  });
  app.setNotFoundHandler((req, reply) => {
    send(reply, 404, render(protocolOf(req.url), 404, `no endpoint ${req.method} ${pathOnly(req.url)}`));
  });
  app.setErrorHandler((error: FastifyError, req, reply) => {
    const protocol = protocolOf(req.url);
    const status = error.statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      send(
        reply,
        status,
        render(protocol, status, "the request could not be processed", status === 400 ? "invalidSyntax" : undefined),
      );
      return;
    }
    const fault = faultOf(error, faults, logger, { label: "request", method: req.method, path: pathOnly(req.url) });
    if (fault.status === 500) {
      send(reply, 500, render(protocol, 500, `internal server error (error id ${fault.errorId})`));
      return;
    }
    if (fault.status === 503) reply.header("retry-after", String(fault.retryAfterSeconds));
    send(
      reply,
      fault.status,
      render(protocol, fault.status, fault.message, fault.status === 400 ? "invalidValue" : undefined),
    );
  });
}
