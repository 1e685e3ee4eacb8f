import type { FastifyInstance, FastifyReply } from "fastify";
import type { DatabaseFaults } from "../../platform/faults.js";
import { logInternalError } from "../../platform/internal-error.js";
import type { Logger } from "../../platform/logger.js";
import { isStorableText } from "../../platform/storable.js";
import type { ScimClientLookup } from "../plugin.js";
import type { AccessTokenCodec } from "./access-tokens.js";
import { presentedCredentials } from "./credentials.js";

export interface TokenEndpointDeps {
  readonly clients: ScimClientLookup;
  readonly tokens: AccessTokenCodec;
  readonly logger: Logger;
  readonly faults: DatabaseFaults;
}

/** RFC 6749 §5.2 error codes. */
type OAuthError = "invalid_request" | "invalid_client" | "unsupported_grant_type" | "unauthorized_client";

const MAX_TOKEN_REQUEST_BYTES = 16 * 1024;

/**
 * The OAuth 2.0 token endpoint of one connection, `POST {scim base}/oauth/token` (RFC 6749 §4.4, the
 * client-credentials grant): the connection's client id and secret, in HTTP Basic or in the form body, buy an access
 * token that authenticates SCIM requests for an hour. The client is read from the database, not the cache, so a
 * rotated or replaced secret stops buying tokens at once. Answers and errors are RFC 6749's JSON, never SCIM's.
 */
export async function registerTokenEndpoint(app: FastifyInstance, deps: TokenEndpointDeps, prefix: string) {
  await app.register(
    async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser(
        "application/x-www-form-urlencoded",
        { parseAs: "string", bodyLimit: MAX_TOKEN_REQUEST_BYTES },
        (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
      );
      scope.addContentTypeParser(
        "application/json",
        { parseAs: "string", bodyLimit: MAX_TOKEN_REQUEST_BYTES },
        (_req, body, done) => {
          try {
            done(null, (body as string).trim() === "" ? {} : JSON.parse(body as string));
          } catch {
            done(null, null);
          }
        },
      );
      scope.setErrorHandler((error, req, reply) => {
        if (deps.faults.isUnavailable(error)) {
          reply.header("retry-after", String(deps.faults.retryAfterSeconds));
          return reply.code(503).send({ error: "temporarily_unavailable" });
        }
        const status = (error as { statusCode?: number }).statusCode;
        if (status !== undefined && status >= 400 && status < 500) {
          return refuse(reply, "invalid_request", "the request could not be read as a token request");
        }
        logInternalError(deps.logger, error, { method: req.method, path: "oauth/token" }, "token request failed");
        return reply.code(500).send({ error: "server_error" });
      });

      scope.post<{ Params: { clientId: string } }>("/oauth/token", async (req, reply) => {
        reply.header("cache-control", "no-store").header("pragma", "no-cache");
        const form = req.body;
        if (form === null || typeof form !== "object" || Array.isArray(form)) {
          return refuse(reply, "invalid_request", "send a form body (application/x-www-form-urlencoded)");
        }
        const field = (name: string) => {
          const v = (form as Record<string, unknown>)[name];
          return typeof v === "string" ? v : undefined;
        };
        const fromHeader = req.headers.authorization === undefined ? undefined : basicOf(req.headers.authorization);
        const inBody = field("client_id") !== undefined || field("client_secret") !== undefined;
        // RFC 6749 §2.3: a client uses one authentication method per request.
        if (fromHeader !== undefined && inBody) {
          return refuse(reply, "invalid_request", "send the client credentials in the header or the body, not both");
        }
        const clientId = fromHeader?.user ?? field("client_id");
        const secret = fromHeader?.password ?? field("client_secret");
        if (clientId === undefined || secret === undefined || secret === "") {
          return refuse(reply, "invalid_client", "client authentication failed", fromHeader !== undefined);
        }
        const grant = field("grant_type");
        if (grant === undefined) return refuse(reply, "invalid_request", "grant_type is required");
        if (grant !== "client_credentials") {
          return refuse(reply, "unsupported_grant_type", "only the client_credentials grant is supported");
        }
        const pathId = req.params.clientId;
        const client =
          clientId === pathId && isStorableText(clientId) ? await deps.clients.refresh(clientId) : undefined;
        const which = client === undefined ? undefined : deps.clients.match(client, secret);
        if (client === undefined || which === undefined) {
          return refuse(reply, "invalid_client", "client authentication failed", fromHeader !== undefined);
        }
        if (!client.authMethods.includes("client_credentials")) {
          return refuse(reply, "unauthorized_client", "this connection does not accept OAuth 2.0 access tokens");
        }
        if (which === "previous") await deps.clients.notePreviousSecretUse(client);
        const { token, expiresIn } = await deps.tokens.issue(client, which);
        return { access_token: token, token_type: "Bearer", expires_in: expiresIn };
      });
    },
    { prefix },
  );
}

function refuse(reply: FastifyReply, error: OAuthError, description: string, basic = false) {
  reply.header("cache-control", "no-store").header("pragma", "no-cache");
  // RFC 6749 §5.2: 401 for a client that failed to authenticate, with a challenge when it used HTTP Basic.
  if (error === "invalid_client") {
    if (basic) reply.header("www-authenticate", 'Basic realm="scim"');
    return reply.code(401).send({ error, error_description: description });
  }
  return reply.code(400).send({ error, error_description: description });
}

function basicOf(header: string): { user: string; password: string } | undefined {
  try {
    const presented = presentedCredentials(header);
    if (presented.kind !== "basic") return undefined;
    // RFC 6749 §2.3.1: the id and secret are form-encoded before they go into Basic.
    return { user: decodeURIComponent(presented.user), password: decodeURIComponent(presented.password) };
  } catch {
    return undefined;
  }
}
