import type { FastifyError, FastifyInstance, FastifyRequest, HTTPMethods } from "fastify";
import type { ScimClient } from "../directory/scim-clients/types.js";
import type { Logger } from "../platform/logger.js";
import { logInternalError, pathOnly } from "../platform/internal-error.js";
import { describeProblem, findUnstorable, findUnstorableParameter, isStorableText } from "../platform/storable.js";
import { type DatabaseFaults, faultOf } from "../platform/faults.js";
import type { AccessTokenCodec } from "./auth/access-tokens.js";
import { authenticate, authenticateAtOnce } from "./auth/authenticate.js";
import { type Presented, presentedCredentials } from "./auth/credentials.js";
import { badRequest, ScimError, scimErrorOf } from "./errors.js";
import { MAX_BODY_BYTES, MAX_JSON_DEPTH } from "./limits.js";
import { SCIM_CONTENT_TYPE, sendError } from "./render.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The authenticated SCIM client of this request (set by the SCIM scope's onRequest hook). */
    scimClient: ScimClient;
    /** Which of the client's secrets authenticated this request (`previous` during a rotation's grace period). */
    scimSecret: "current" | "previous";
  }
}

export interface ScimClientLookup {
  /** Cached (found clients only): a few seconds stale at most. */
  get(clientId: string): Promise<ScimClient | undefined>;
  /** What get would answer from its cache without waiting, if anything (undefined: ask get). */
  peek(clientId: string): ScimClient | undefined;
  /** Read from the database now (and cache the result). */
  refresh(clientId: string): Promise<ScimClient | undefined>;
  /** Which of the client's live secrets this is, compared in constant time. */
  match(client: ScimClient, presented: string): "current" | "previous" | undefined;
  notePreviousSecretUse(client: ScimClient): Promise<void>;
  /** After a successful request: the connection's first one marks it active (`connection.activated`). */
  noteSuccess(client: ScimClient): Promise<void>;
}

/**
 * The SCIM front door: JSON bodies as application/scim+json or application/json,
 * client lookup (unknown → 404), authentication by the methods the client accepts (its secret as a bearer value or
 * in HTTP Basic, or an OAuth 2.0 access token issued for it), and every error as a SCIM Error body.
 */
export function installScimPlumbing(
  scope: FastifyInstance,
  clients: ScimClientLookup,
  logger: Logger,
  faults: DatabaseFaults,
  tokens: AccessTokenCodec,
): void {
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

  const match = (client: ScimClient, presented: string) => clients.match(client, presented);

  // A request of a cached client presenting its current static secret is authenticated without waiting for
  // anything, in the hook's own turn; any other (a client to read, an access token, a secret refused or previous)
  // takes the full path, which reads the client again before refusing.
  scope.addHook("onRequest", (req, reply, done) => {
    reply.header("content-type", SCIM_CONTENT_TYPE);
    const { clientId } = req.params as { clientId?: string };
    // A client id PostgreSQL could not even compare names no client.
    if (clientId === undefined || !isStorableText(clientId)) {
      done(new ScimError(404, undefined, "SCIM client not found"));
      return;
    }
    const cached = clients.peek(clientId);
    if (cached !== undefined) {
      let presented: Presented;
      try {
        presented = presentedCredentials(req.headers.authorization);
      } catch (e) {
        done(e as ScimError);
        return;
      }
      if (authenticateAtOnce(cached, presented, match) === "current") {
        req.scimClient = cached;
        req.scimSecret = "current";
        done(refusalOf(req));
        return;
      }
    }
    authenticateRequest(req, clientId).then(() => done(refusalOf(req)), done);
  });

  async function authenticateRequest(req: FastifyRequest, clientId: string): Promise<void> {
    let client = await clients.get(clientId);
    if (client === undefined) throw new ScimError(404, undefined, "SCIM client not found");
    const presented = presentedCredentials(req.headers.authorization);
    let which = await authenticate(client, presented, match, tokens);
    // Before refusing, read the client again: another instance may have just rotated its secret.
    if (which === undefined) {
      client = await clients.refresh(clientId);
      if (client === undefined) throw new ScimError(404, undefined, "SCIM client not found");
      which = await authenticate(client, presented, match, tokens);
    }
    if (which === undefined) throw new ScimError(401, undefined, "invalid authorization header");
    if (which === "previous") await clients.notePreviousSecretUse(client);
    req.scimClient = client;
    req.scimSecret = which;
  }

  // The hooks below run on every request and wait for nothing: they answer through `done`, which costs Fastify
  // no promise and no extra turn of the microtask queue.

  // One pass over the parsed body instead of a check in every field reader.
  scope.addHook("preValidation", (req, _reply, done) => {
    const problem = findUnstorable(req.body, MAX_JSON_DEPTH);
    done(problem === undefined ? undefined : badRequest("invalidValue", describeProblem(problem, MAX_JSON_DEPTH)));
  });

  // A connection's first successful request activates it; after the answer, and not awaited, so neither the IdP
  // nor the request's other bookkeeping (the request log's hook runs next) waits for it.
  scope.addHook("onResponse", (req, reply, done) => {
    const client = req.scimClient as ScimClient | undefined;
    if (client !== undefined && client.activatedTime === null && reply.statusCode < 300) {
      clients.noteSuccess(client).catch((e: unknown) => {
        logger.warn({ err: e, clientId: client.clientId }, "could not record the connection's activation");
      });
    }
    done();
  });

  // RFC 9110 §15.3.5: a 204 has no content, so no content type either.
  scope.addHook("onSend", (_req, reply, payload, done) => {
    if (reply.statusCode === 204) reply.removeHeader("content-type");
    done(null, payload);
  });

  scope.setNotFoundHandler((req, reply) => {
    sendError(reply, 404, undefined, notFoundDetail(req.method, req.url));
  });

  scope.setErrorHandler((thrown: FastifyError | ScimError, req, reply) => {
    const error = scimErrorOf(thrown) ?? thrown;
    if (error instanceof ScimError) {
      if (error.status === 401) reply.header("www-authenticate", SCIM_CHALLENGE);
      if (error.status >= 500) {
        const id = logInternalError(
          logger,
          error,
          { method: req.method, path: pathOnly(req.url) },
          "SCIM request failed",
        );
        sendError(reply, error.status, error.scimType, `${error.detail ?? "internal server error"} (error id ${id})`);
        return;
      }
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
    const status = (error as FastifyError).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      sendError(reply, status, status === 400 ? "invalidSyntax" : undefined, "the request could not be processed");
      return;
    }
    const fault = faultOf(error, faults, logger, {
      label: "SCIM request",
      method: req.method,
      path: pathOnly(req.url),
    });
    if (fault.status === 503) reply.header("retry-after", String(fault.retryAfterSeconds));
    if (fault.status === 500) sendError(reply, 500, undefined, `internal server error (error id ${fault.errorId})`);
    else sendError(reply, fault.status, fault.status === 400 ? "invalidValue" : undefined, fault.message);
  });
}

/** RFC 6750 §3: every 401 names the scheme and realm the client must answer. */
export const SCIM_CHALLENGE = 'Bearer realm="scim"';

/** The path after the base URL; /Bulk and /Me are named as unsupported (RFC 7644 §3.7, §3.11). */
export function notFoundDetail(method: string, url: string): string {
  const path = pathOnly(url).replace(/^\/scim\/[^/]+\/v2/i, "");
  return /^\/(Bulk|Me)(\/|$)/i.test(path)
    ? `${path} is not supported by this service provider`
    : `no SCIM endpoint ${method} ${path}`;
}

const ALL_METHODS: readonly HTTPMethods[] = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/** Registers the methods a path does not serve, answering 405 in the SCIM error format. */
export function refuseOtherMethods(scope: FastifyInstance, url: string, allowed: readonly HTTPMethods[]): void {
  const others = ALL_METHODS.filter((m) => !allowed.includes(m));
  const refusal = () =>
    new ScimError(405, undefined, `method not allowed; this endpoint accepts ${allowed.join(", ")}`);
  scope.route({
    method: others as HTTPMethods[],
    url,
    // Refused in onRequest, after authentication and before the body is read: 405 whatever the body holds.
    onRequest: async (_req, reply) => {
      reply.header("allow", allowed.join(", "));
      throw refusal();
    },
    // Never reached (onRequest always throws); Fastify requires a handler.
    handler: async () => {
      throw refusal();
    },
  });
}

/** What an authenticated request is refused for before its body is read, if anything. */
function refusalOf(req: FastifyRequest): ScimError | undefined {
  // The route is known before the body is read: an unknown route is 404 whatever the body holds.
  if (req.is404) return new ScimError(404, undefined, notFoundDetail(req.method, req.url));
  const inPath = findUnstorableParameter(req.params);
  if (inPath !== undefined) return badRequest("invalidValue", `the URL path contains ${inPath.problem}`);
  const inQuery = findUnstorableParameter(req.query);
  if (inQuery !== undefined) {
    return badRequest(
      "invalidValue",
      `query parameter ${inQuery.name} contains ${inQuery.problem}, which cannot be stored`,
    );
  }
  return undefined;
}
