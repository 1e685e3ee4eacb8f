import type { ColumnType } from "kysely";

/** Row types of the operational tables: request log, audit trail and webhook dispatcher heartbeats. */
type Timestamp = ColumnType<Date, Date | string, Date | string>;

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
