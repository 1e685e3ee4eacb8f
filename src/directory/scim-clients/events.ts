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

/** A deleted connection has no webhook left to sign with: its last event goes to the feed only. */
export const withoutWebhook = (client: ScimClient): ScimClient => ({ ...client, webhookUrl: null });
