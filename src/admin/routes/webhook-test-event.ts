import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { ScimClientService } from "../../directory/scim-clients/service.js";
import type { ScimClient } from "../../directory/scim-clients/types.js";
import { TEST_EVENT } from "../../webhooks/test-event-repo.js";
import { AdminError, notFound } from "../errors.js";
import { errors } from "../schemas/kit.js";
import { ClientParams } from "../schemas/scim-clients.js";

const TestEventJson = Type.Object({
  event_id: Type.String({ format: "uuid", description: "the queued event's id: its `webhook-id`" }),
  event: Type.Literal(TEST_EVENT),
});

export interface WebhookTestEventRouteDeps {
  readonly scimClients: ScimClientService;
  /** Queues the client's test event in the outbox (test-event-repo.ts); returns its id. */
  readonly queue: (client: ScimClient) => Promise<string>;
  /** Why the outbound guard refuses the URL now (docs/security.md "Outbound requests"), or undefined. */
  readonly checkUrl: (url: string) => Promise<string | undefined>;
  /** Wakes the local dispatcher: the event goes out at once, not at the next poll. */
  readonly wake: () => void;
}

/**
 * `POST /scimClients/{client_id}:sendTestEvent` → 202 `{event_id, event: "webhook.test"}`: one test event queued
 * through the outbox, delivered and logged like any webhook event (docs/webhooks.md). A write: the viewer role may
 * not call it. find-my-way reads `:clientId::x` as one parameter name; a regex ends the parameter, `::` is a colon.
 */
export function registerWebhookTestEventRoute(scope: FastifyInstance, deps: WebhookTestEventRouteDeps): void {
  scope.post<{ Params: Static<typeof ClientParams> }>(
    "/scimClients/:clientId(^[0-9A-Za-z._~-]+)::sendTestEvent",
    { schema: { tags: ["SCIM clients"], params: ClientParams, response: { 202: TestEventJson, ...errors } } },
    async (req, reply) => {
      const client = await deps.scimClients.get(req.params.clientId);
      if (client === undefined) throw notFound(`SCIM client ${req.params.clientId} does not exist`);
      if (client.webhookUrl === null) {
        throw new AdminError("FAILED_PRECONDITION", "the SCIM client has no webhook URL configured");
      }
      if (client.webhookSecretSealed === null) {
        throw new AdminError("FAILED_PRECONDITION", "the SCIM client has no webhook secret configured");
      }
      // Checked again here (not only when stored): DNS answers change, and the allow list may have.
      const refused = await deps.checkUrl(client.webhookUrl);
      if (refused !== undefined) {
        throw new AdminError("FAILED_PRECONDITION", `the SCIM client's webhook URL is refused: ${refused}`);
      }
      const eventId = await deps.queue(client);
      deps.wake();
      return reply.code(202).send({ event_id: eventId, event: TEST_EVENT });
    },
  );
}
