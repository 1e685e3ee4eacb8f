import type { FastifyError, FastifyInstance, FastifyRequest } from "fastify";
import { verifySecret } from "../platform/crypto.js";
import { pathOnly } from "../platform/internal-error.js";
import type { Logger } from "../platform/logger.js";
import { describeProblem, findUnstorable, findUnstorableParameter } from "../platform/storable.js";
import { type DatabaseFaults, faultOf } from "../platform/faults.js";
import { adminErrorOf } from "./domain-errors.js";
import { AdminError, errorBody, invalidArgument } from "./errors.js";
import { MAX_ADMIN_JSON_DEPTH } from "./limits.js";
import { checkSetupRoute, installSetupScoping, type SetupGuardDeps, setupPrincipalOf } from "./setup-links/guard.js";
import type { AdminTokenService } from "./tokens/service.js";
import type { AdminPrincipal } from "./tokens/types.js";

export const ADMIN_PREFIX = "/v2alpha1/admin";

/** RFC 6750 §3: a 401 names the scheme and realm of the admin token. */
export const ADMIN_CHALLENGE = 'Bearer realm="roster-admin"';

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
 * the viewer role's limits, the admin error body, 404/415 in that body, and input PostgreSQL cannot store refused
 * before any route reads it. Routes are registered by the caller (app.ts) inside this scope.
 */
export function installAdminPlumbing(
  scope: FastifyInstance,
  adminTokenHash: string,
  logger: Logger,
  tokens: AdminTokenService,
  faults: DatabaseFaults,
  setup: SetupGuardDeps,
): void {
  scope.addHook("onRequest", async (req) => {
    const principal = await principalOf(req);
    req.adminPrincipal = principal;
    // The route is known before the body is read: an unknown route is 404 whatever the body holds.
    if (req.is404) throw new AdminError("NOT_FOUND", notFoundMessage(req.method, req.url));
    if (principal.kind === "setup") checkSetupRoute(req, principal, ADMIN_PREFIX, setup);
    if (principal.role === "viewer" && !viewerMayCall(req.method, req.routeOptions.config)) {
      throw new AdminError("PERMISSION_DENIED", "the viewer role may only read (GET) and verify API keys");
    }
    const inPath = findUnstorableParameter(req.params);
    if (inPath !== undefined) throw invalidArgument(`the URL path contains ${inPath.problem}`);
    const inQuery = findUnstorableParameter(req.query);
    if (inQuery !== undefined) {
      throw invalidArgument(`query parameter ${inQuery.name} contains ${inQuery.problem}, which cannot be stored`);
    }
  });

  // An empty body under a JSON content type is no body (what many HTTP clients send on a DELETE or an action that
  // takes none); a route that needs one says so in its validator.
  const parseJson = scope.getDefaultJsonParser("error", "error");
  scope.removeContentTypeParser("application/json");
  scope.addContentTypeParser("application/json", { parseAs: "string" }, (req, body, done) => {
    const text = body.toString();
    if (text.trim() === "") done(null, null);
    else parseJson(req, text, done);
  });
  installSetupScoping(scope, setup);

  /** The bootstrap token in constant time, else a named token by digest, else a setup link's session cookie. */
  async function principalOf(req: FastifyRequest): Promise<AdminPrincipal> {
    const header = req.headers.authorization;
    if (header === undefined || header.trim() === "") {
      const session = await setupPrincipalOf(req, setup);
      if (session !== undefined) return session;
      throw new AdminError("UNAUTHENTICATED", "missing Authorization: Bearer <admin token>");
    }
    const token = header.trim().replace(/^bearer\s+/i, "");
    const principal: AdminPrincipal | undefined = verifySecret(token, adminTokenHash)
      ? { kind: "bootstrap", role: "admin" }
      : await tokens.authenticate(token);
    if (principal === undefined) throw new AdminError("UNAUTHENTICATED", "invalid admin token");
    return principal;
  }

  // One pass over the parsed body instead of a check in every field reader.
  scope.addHook("preValidation", async (req) => {
    const problem = findUnstorable(req.body, MAX_ADMIN_JSON_DEPTH);
    if (problem !== undefined) throw invalidArgument(describeProblem(problem, MAX_ADMIN_JSON_DEPTH));
  });

  // RFC 9110 §15.3.5: a 204 has no content, so no content type either.
  scope.addHook("onSend", async (_req, reply, payload) => {
    if (reply.statusCode === 204) reply.removeHeader("content-type");
    return payload;
  });

  scope.setNotFoundHandler((req, reply) => {
    reply.code(404).send(errorBody(404, "NOT_FOUND", notFoundMessage(req.method, req.url)));
  });

  scope.setErrorHandler((thrown: FastifyError | AdminError, req, reply) => {
    const error = adminErrorOf(thrown) ?? thrown;
    if (error instanceof AdminError) {
      if (error.httpStatus === 401) reply.header("www-authenticate", ADMIN_CHALLENGE);
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
    const fault = faultOf(error, faults, logger, {
      label: "admin request",
      method: req.method,
      path: pathOnly(req.url),
    });
    if (fault.status === 503) {
      reply.header("retry-after", String(fault.retryAfterSeconds));
      reply.code(503).send(errorBody(503, "UNAVAILABLE", fault.message));
    } else if (fault.status === 400) {
      reply.code(400).send(errorBody(400, "INVALID_ARGUMENT", fault.message));
    } else {
      reply.code(500).send(errorBody(500, "INTERNAL", `internal error (error id ${fault.errorId})`));
    }
  });
}

export const notFoundMessage = (method: string, url: string): string => `no admin route ${method} ${pathOnly(url)}`;

/** Fastify's own 4xx messages (bad JSON, empty body) are safe to show; nothing else is. */
function safeClientMessage(error: FastifyError): string {
  if (error.code === "FST_ERR_CTP_EMPTY_JSON_BODY") return "request body is empty";
  if (error instanceof SyntaxError || error.code === "FST_ERR_CTP_INVALID_JSON_BODY") {
    return "request body is not valid JSON";
  }
  return error.message;
}
