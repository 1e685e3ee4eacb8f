import type { DirectoryEvent } from "../events.js";
import type { ScimClient } from "./types.js";

/**
 * The `connection.*` events an application reacts to ("your directory is connected"): the connection's identity and
 * state, never a secret. `state`: `inactive` until its first successful SCIM request, then `active`; `deleted` last.
 */
export type ConnectionState = "inactive" | "active" | "deleted";

export function connectionEvent(
  kind: "connection.created" | "connection.activated" | "connection.deleted",
  client: ScimClient,
  state: ConnectionState,
): DirectoryEvent {
  return {
    kind,
    resourceId: client.clientId,
    data: {
      id: client.clientId,
      organization_id: client.organizationId,
      name: client.name,
      state,
      create_time: client.createTime.toISOString(),
      activated_time: client.activatedTime?.toISOString() ?? null,
    },
  };
}

/**
 * Connection events go to the events feed only (docs/events.md): a connection's webhook carries the changes of its
 * directory, and a deleted connection has no webhook left to sign with.
 */
export const withoutWebhook = (client: ScimClient): ScimClient => ({ ...client, webhookUrl: null });
