import type { Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { ScimClientService } from "../../directory/scim-clients/service.js";
import { generateWebhookSecret } from "../../webhooks/signing.js";
import { notFound } from "../errors.js";
import { errors } from "../schemas/kit.js";
import { ClientParams, WebhookSecretJson } from "../schemas/scim-clients.js";

/**
 * `POST /scimClients/{client_id}:generateWebhookSecret` → `{secret: "whsec_…"}`: a fresh Standard Webhooks secret
 * (32 random bytes) for the portal's "generate" button. Nothing is stored; setting it is a PATCH of `webhook.secret`.
 * find-my-way reads `:clientId::x` as one parameter name; a regex ends the parameter, `::` is a literal colon.
 */
export function registerWebhookSecretRoute(scope: FastifyInstance, scimClients: ScimClientService): void {
  scope.post<{ Params: Static<typeof ClientParams> }>(
    "/scimClients/:clientId(^[0-9A-Za-z._~-]+)::generateWebhookSecret",
    { schema: { tags: ["SCIM clients"], params: ClientParams, response: { 200: WebhookSecretJson, ...errors } } },
    async (req, reply) => {
      if ((await scimClients.get(req.params.clientId)) === undefined) {
        throw notFound(`SCIM client ${req.params.clientId} does not exist`);
      }
      reply.header("cache-control", "no-store");
      return { secret: generateWebhookSecret() };
    },
  );
}
