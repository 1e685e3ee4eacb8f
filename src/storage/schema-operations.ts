import type { ColumnType } from "kysely";

/** Row types of the operational and admin tables: request log, audit trail, dispatcher heartbeats, admin tokens, setup links. */
type Timestamp = ColumnType<Date, Date | string, Date | string>;

/** One segment of a client's SCIM request log: the entries of one written batch (migration 0017). */
export interface ScimRequestLogSegmentsTable {
  client_id: string;
  last_id: string;
  first_id: string;
  organization_id: string;
  entry_count: number;
  statuses: number[];
  methods: string[];
  resource_ids: string[];
  /** Brotli-compressed: the entries' fields (storage/request-log-segments.ts). */
  entries: Buffer;
  /** Brotli-compressed: the entries' request and response bodies. */
  bodies: Buffer;
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
}
