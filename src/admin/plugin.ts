import type { FastifyError, FastifyInstance } from "fastify";
import type { Logger } from "../platform/logger.js";
import { verifySecret } from "../platform/crypto.js";
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from "../storage/errors.js";
import { AdminError, errorBody } from "./errors.js";
import type { AdminPrincipal, AdminTokenService } from "./tokens/service.js";

export const ADMIN_PREFIX = "/v2alpha1/admin";

declare module "fastify" {
  interface FastifyContextConfig {
    /** A non-GET admin route the `viewer` role may call too (it only reads, e.g. `apiKeys:verify`). */
    viewerAllowed?: boolean;
  }
  interface FastifyRequest {
    /** Who called the admin API (set by the admin scope's onRequest hook). */
    adminPrincipal?: AdminPrincipal;
  }
}

/** The viewer role reads: every GET (and HEAD), and the routes marked `viewerAllowed`; nothing else. */
export const viewerMayCall = (method: string, config: { viewerAllowed?: boolean } | undefined): boolean =>
  method === "GET" || method === "HEAD" || config?.viewerAllowed === true;

/**
 * Admin scope plumbing: bearer admin token (the bootstrap token in constant time, else a named token by digest),
 * the viewer role's limits, the admin error body, 404/415 in that body. Routes are registered by the caller
 * (app.ts) inside this scope.
 */
export function installAdminPlumbing(
  scope: FastifyInstance,
  adminTokenHash: string,
  logger: Logger,
  tokens: AdminTokenService,
): void {
  scope.addHook("onRequest", async (req) => {
    const header = req.headers.authorization;
    if (header === undefined || header.trim() === "") {
      throw new AdminError("UNAUTHENTICATED", "missing Authorization: Bearer <admin token>");
    }
    const token = header.trim().replace(/^bearer\s+/i, "");
    const principal: AdminPrincipal | undefined = verifySecret(token, adminTokenHash)
      ? { kind: "bootstrap", role: "admin" }
      : await tokens.authenticate(token);
    if (principal === undefined) throw new AdminError("UNAUTHENTICATED", "invalid admin token");
    req.adminPrincipal = principal;
    if (principal.role === "viewer" && !req.is404 && !viewerMayCall(req.method, req.routeOptions.config)) {
      throw new AdminError("PERMISSION_DENIED", "the viewer role may only read (GET) and verify API keys");
    }
  });

  scope.setNotFoundHandler((req, reply) => {
    reply.code(404).send(errorBody(404, "NOT_FOUND", `no admin route ${req.method} ${req.url.split("?")[0]}`));
  });

  scope.setErrorHandler((error: FastifyError | AdminError, req, reply) => {
    if (error instanceof AdminError) {
      reply.code(error.httpStatus).send(errorBody(error.httpStatus, error.status, error.message, error.details));
      return;
    }
    const code = (error as FastifyError).code;
    if (code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
      reply.code(415).send(errorBody(415, "UNSUPPORTED_MEDIA_TYPE", "request bodies must be application/json"));
      return;
    }
    if (code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      reply.code(413).send(errorBody(413, "INVALID_ARGUMENT", "request body is too large"));
      return;
    }
    const status = (error as FastifyError).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      reply.code(400).send(errorBody(400, "INVALID_ARGUMENT", safeClientMessage(error)));
      return;
    }
    if (isDatabaseUnavailable(error)) {
      logger.warn(
        { code: (error as { code?: unknown }).code, method: req.method },
        "admin request: database unavailable",
      );
      reply.header("retry-after", String(DATABASE_RETRY_AFTER_SECONDS));
      reply.code(503).send(errorBody(503, "UNAVAILABLE", "the service is temporarily unavailable; retry later"));
      return;
    }
    logger.error({ err: error, method: req.method, url: req.url }, "admin request failed");
    reply.code(500).send(errorBody(500, "INTERNAL", "internal error"));
  });
}

/** Fastify's own 4xx messages (bad JSON, empty body) are safe to show; nothing else is. */
function safeClientMessage(error: FastifyError): string {
  if (error.code === "FST_ERR_CTP_EMPTY_JSON_BODY") return "request body is empty";
  if (error instanceof SyntaxError || error.code === "FST_ERR_CTP_INVALID_JSON_BODY") {
    return "request body is not valid JSON";
  }
  return error.message;
}
