import type { FastifyError, FastifyInstance, FastifyRequest, HTTPMethods } from "fastify";
import { isClientGone } from "../directory/scim-clients/gone.js";
import type { ScimClient } from "../directory/scim-clients/service.js";
import { verifySecret } from "../platform/crypto.js";
import type { Logger } from "../platform/logger.js";
import { ScimError } from "./errors.js";
import { MAX_BODY_BYTES } from "./limits.js";
import { SCIM_CONTENT_TYPE, sendError } from "./render.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The authenticated SCIM client of this request (set by the SCIM scope's onRequest hook). */
    scimClient: ScimClient;
  }
}

export interface ScimClientLookup {
  get(clientId: string): Promise<ScimClient | undefined>;
}

/**
 * The SCIM front door (spec sections 1, 5, 7, 8): JSON bodies as application/scim+json or application/json,
 * client lookup (unknown → 404), shared-secret authentication, and every error as a SCIM Error body.
 */
export function installScimPlumbing(scope: FastifyInstance, clients: ScimClientLookup, logger: Logger): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser(
    ["application/scim+json", "application/json"],
    { parseAs: "string", bodyLimit: MAX_BODY_BYTES },
    (_req, body, done) => {
      // An empty body (DELETE with a content type, say) parses to undefined; routes that need one say so.
      if ((body as string).trim() === "") {
        done(null, undefined);
        return;
      }
      try {
        done(null, JSON.parse(body as string));
      } catch {
        done(new ScimError(400, "invalidSyntax", "request body is not valid JSON"), undefined);
      }
    },
  );

  scope.addHook("onRequest", async (req, reply) => {
    reply.header("content-type", SCIM_CONTENT_TYPE);
    const { clientId } = req.params as { clientId?: string };
    const client = clientId === undefined ? undefined : await clients.get(clientId);
    if (client === undefined) throw new ScimError(404, undefined, "SCIM client not found");
    authenticate(req, client);
    req.scimClient = client;
  });

  scope.setNotFoundHandler((req, reply) => {
    const path = (req.url.split("?")[0] ?? "").replace(/^\/scim\/[^/]+\/v2/, "");
    const detail = /^\/(Bulk|Me)(\/|$)/i.test(path)
      ? `${path} is not supported by this service provider`
      : `no SCIM endpoint ${req.method} ${path}`;
    sendError(reply, 404, undefined, detail);
  });

  scope.setErrorHandler((error: FastifyError | ScimError, req, reply) => {
    if (error instanceof ScimError) {
      if (error.status >= 500) logger.error({ err: error, url: req.url }, "SCIM request failed");
      sendError(reply, error.status, error.scimType, error.detail);
      return;
    }
    switch ((error as FastifyError).code) {
      case "FST_ERR_CTP_BODY_TOO_LARGE":
        sendError(reply, 413, undefined, `request body exceeds ${MAX_BODY_BYTES} bytes`);
        return;
      case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
        sendError(reply, 415, undefined, "request bodies must be application/scim+json or application/json");
        return;
      case "FST_ERR_CTP_EMPTY_JSON_BODY":
      case "FST_ERR_CTP_INVALID_JSON_BODY":
        sendError(reply, 400, "invalidSyntax", "request body is not valid JSON");
        return;
    }
    if (isClientGone(error)) {
      sendError(reply, 404, undefined, "SCIM client not found");
      return;
    }
    const status = (error as FastifyError).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      sendError(reply, status, status === 400 ? "invalidSyntax" : undefined, "the request could not be processed");
      return;
    }
    logger.error({ err: error, method: req.method, url: req.url }, "SCIM request failed");
    sendError(reply, 500, undefined, "internal server error");
  });
}

/** Spec 5: trim, drop one case-insensitive `Bearer` prefix, compare in constant time. */
function authenticate(req: FastifyRequest, client: ScimClient): void {
  const header = req.headers.authorization;
  if (header === undefined || header.trim() === "") {
    throw new ScimError(401, undefined, "no authorization header found");
  }
  const presented = header.trim().replace(/^bearer(\s+|$)/i, "");
  if (presented === "" || !verifySecret(presented, client.secretHash)) {
    throw new ScimError(401, undefined, "invalid authorization header");
  }
}

const ALL_METHODS: readonly HTTPMethods[] = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/** Registers the methods a path does not serve, answering 405 in the SCIM error format. */
export function refuseOtherMethods(scope: FastifyInstance, url: string, allowed: readonly HTTPMethods[]): void {
  const others = ALL_METHODS.filter((m) => !allowed.includes(m));
  scope.route({
    method: others as HTTPMethods[],
    url,
    handler: async (_req, reply) => {
      reply.header("allow", allowed.join(", "));
      throw new ScimError(405, undefined, `method not allowed; this endpoint accepts ${allowed.join(", ")}`);
    },
  });
}
