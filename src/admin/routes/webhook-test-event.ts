import type { FastifyInstance } from "fastify";
import type { ScimClient, ScimClientService } from "../../directory/scim-clients/service.js";
import { TEST_EVENT } from "../../webhooks/test-event-repo.js";
import { AdminError, notFound } from "../errors.js";

export interface WebhookTestEventRouteDeps {
  readonly scimClients: ScimClientService;
  /** Queues the client's test event in the outbox (test-event-repo.ts); returns its id. */
  readonly queue: (client: ScimClient) => Promise<string>;
  /** Wakes the local dispatcher: the event goes out at once, not at the next poll. */
  readonly wake: () => void;
}

/**
 * `POST /scimClients/{client_id}:sendTestEvent` → 202 `{event_id, event: "webhook.test"}`: one test event queued
 * through the outbox, delivered and logged like any webhook event (docs/webhooks.md). A write: the viewer role may
 * not call it. find-my-way reads `:clientId::x` as one parameter name; a regex ends the parameter, `::` is a colon.
 */
export function registerWebhookTestEventRoute(scope: FastifyInstance, deps: WebhookTestEventRouteDeps): void {
  scope.post<{ Params: { clientId: string } }>(
    "/scimClients/:clientId(^[0-9A-Za-z._~-]+)::sendTestEvent",
    async (req, reply) => {
      const client = await deps.scimClients.get(req.params.clientId);
      if (client === undefined) throw notFound(`SCIM client ${req.params.clientId} does not exist`);
      if (client.webhookUrl === null) {
        throw new AdminError("FAILED_PRECONDITION", "the SCIM client has no webhook URL configured");
      }
      if (client.webhookSecretSealed === null) {
        throw new AdminError("FAILED_PRECONDITION", "the SCIM client has no webhook secret configured");
      }
      const eventId = await deps.queue(client);
      deps.wake();
      return reply.code(202).send({ event_id: eventId, event: TEST_EVENT });
    },
  );
}
