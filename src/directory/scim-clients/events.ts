import type { DirectoryEvent, EventOrigin } from "../events.js";
import type { ScimClient } from "./types.js";

/**
 * The `connection.*` events an application reacts to ("your directory is connected"): the connection's identity and
 * state, never a secret. `state`: `inactive` until its first successful SCIM request, then `active`; `deleted` last.
 */
export type ConnectionState = "inactive" | "active" | "deleted";

export type ConnectionEventKind = "connection.created" | "connection.activated" | "connection.deleted";

export function connectionEvent(kind: ConnectionEventKind, client: ScimClient, state: ConnectionState): DirectoryEvent {
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
 * The origin of a connection's own events: its creation and deletion are the admin API's doing (a setup-link
 * session's too), its activation its first successful SCIM request's. They go to the events feed and, like its
 * directory's changes, to the connection's webhook when it has a URL (docs/webhooks.md): `connection.deleted` is
 * written while the connection still exists, and the deletion keeps its endpoint until what it owes is delivered
 * (0031-retired-webhooks).
 */
export const connectionOrigin = (client: ScimClient, kind: ConnectionEventKind): EventOrigin => ({
  organizationId: client.organizationId,
  clientId: client.clientId,
  tenant: client.tenant,
  product: client.product,
  webhookUrl: client.webhookUrl,
  source: kind === "connection.activated" ? "scim" : "admin",
});
