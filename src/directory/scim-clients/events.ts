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
 * session's too), its activation its first successful SCIM request's. They go to the events feed only
 * (docs/decisions.md, "Events from any source"): a connection's webhook carries the changes of its directory, and a
 * deleted connection has no webhook left to sign with.
 */
export const connectionOrigin = (client: ScimClient, kind: ConnectionEventKind): EventOrigin => ({
  organizationId: client.organizationId,
  clientId: client.clientId,
  tenant: client.tenant,
  product: client.product,
  webhookUrl: null,
  source: kind === "connection.activated" ? "scim" : "admin",
});
