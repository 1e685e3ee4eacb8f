import type { ColumnType, Generated } from "kysely";

/** Row types of the operational and admin tables: request log, audit trail, dispatcher heartbeats, admin tokens, setup links. */
type Timestamp = ColumnType<Date, Date | string, Date | string>;

/** Which SCIM requests of a connection the request log keeps. */
export type RequestLogMode = "errors" | "all" | "off";

/** One SCIM request of a client, in the daily partition of its id's day (migration 0026). */
export interface ScimRequestLogTable {
  id: string;
  client_id: string;
  organization_id: string;
  time: Timestamp;
  method: string;
  path: string;
  query: string;
  status: number;
  scim_type: string | null;
  duration_ms: number;
  resource_id: string | null;
  request_body: string | null;
  request_truncated: boolean;
  response_body: string | null;
  response_truncated: boolean;
  user_agent: string | null;
  /** The client's address as Fastify saw it (`request.ip`: X-Forwarded-For only from a trusted proxy). */
  client_ip: string | null;
}

export interface ScimRequestCountsTable {
  client_id: string;
  hour: Timestamp;
  requests: number;
  errors: number;
  last_request_time: Timestamp;
}

export interface AdminAuditLogTable {
  id: string;
  time: Timestamp;
  actor_id: string;
  actor_name: string;
  action: string;
  target: string;
  changed_fields: string[];
  status: number;
}

/** Running webhook dispatchers: a claim whose owner's heartbeat is stale (or gone) is taken over. */
export interface WebhookDispatchersTable {
  id: string;
  heartbeat_at: Timestamp;
  started_at: Timestamp;
}

/** Named admin API tokens; only the SHA-256 digest of a token is kept. */
export interface AdminTokensTable {
  id: string;
  name: string;
  role: "admin" | "viewer";
  digest: Buffer;
  expire_time: Date | null;
  revoke_time: Date | null;
  last_used_time: Date | null;
  create_time: Timestamp;
}

export interface SetupLinksTable {
  id: string;
  organization_id: string;
  token_digest: string;
  intent: string;
  return_url: string | null;
  create_time: Date;
  expire_time: Date;
  revoke_time: Date | null;
  first_open_time: Date | null;
  webhook_url: string | null;
  webhook_secret_sealed: string | null;
  webhook_retry: Generated<string>;
  tenant: Generated<string>;
  product: Generated<string>;
}
