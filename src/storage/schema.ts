import type { ColumnType, Generated, GeneratedAlways } from "kysely";
import type {
  AdminAuditLogTable,
  AdminTokensTable,
  RequestLogMode,
  SetupLinksTable,
  ScimRequestCountsTable,
  ScimRequestLogTable,
  WebhookDispatchersTable,
} from "./schema-operations.js";

export type * from "./schema-operations.js";

/** The only place row types live (with schema-operations.ts). Column names are snake_case, as in SQL. */
export interface Database {
  organizations: OrganizationsTable;
  scim_clients: ScimClientsTable;
  instance_settings: InstanceSettingsTable;
  identities: IdentitiesTable;
  identity_identifiers: IdentityIdentifiersTable;
  identity_extension_values: IdentityExtensionValuesTable;
  group_extension_values: GroupExtensionValuesTable;
  directory_groups: DirectoryGroupsTable;
  group_user_members: GroupUserMembersTable;
  group_group_members: GroupGroupMembersTable;
  api_keys: ApiKeysTable;
  api_key_secrets: ApiKeySecretsTable;
  api_key_rate_counters: ApiKeyRateCountersTable;
  webhook_outbox: WebhookOutboxTable;
  retired_webhooks: RetiredWebhooksTable;
  webhook_events: WebhookEventsTable;
  webhook_dispatchers: WebhookDispatchersTable;
  directory_events: DirectoryEventsTable;
  resource_counts: ResourceCountsTable;
  admin_tokens: AdminTokensTable;
  scim_request_log: ScimRequestLogTable;
  scim_request_counts: ScimRequestCountsTable;
  admin_audit_log: AdminAuditLogTable;
  setup_links: SetupLinksTable;
}

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Json<T = unknown> = ColumnType<T, string, string>;

export interface OrganizationsTable {
  id: string;
  name: string;
  create_time: ColumnType<Date, Date | string | undefined, never>;
  /** API keys of an identity are suspended while it is inactive and revoked when it is deleted (0009). */
  keys_follow_identity: Generated<boolean>;
}

export interface ScimClientsTable {
  client_id: string;
  organization_id: string;
  name: string;
  secret_hash: string;
  auto_link: Generated<boolean>;
  mapping: string | null;
  tenant: Generated<string>;
  product: Generated<string>;
  webhook_url: string | null;
  webhook_secret_sealed: string | null;
  log_webhook_events: Generated<boolean>;
  request_log: Generated<RequestLogMode>;
  /** Declared custom schema extensions (directory/scim-clients/extensions.ts ExtensionDeclaration[]). */
  extensions: ColumnType<unknown, string | undefined, string>;
  /** Bytes of `extensions` as JSON text (0018-extension-limits): what a list page counts toward its byte budget. */
  extensions_bytes: Generated<number>;
  unknown_extensions: Generated<"reject" | "store">;
  /** `none` (the default: a failed delivery is not retried) or `backoff`. */
  webhook_retry: Generated<string>;
  /** What a group PATCH answers without a projection: `no_content` (204, the default) or `full` (200, the group). */
  group_patch_response: Generated<string>;
  create_time: ColumnType<Date, Date | string | undefined, never>;
  update_time: Timestamp;
  secret_rotate_time: Date | null;
  /** During a rotation's grace period: the hash of the secret it replaced, valid until the expire time. */
  previous_secret_hash: string | null;
  previous_secret_expire_time: Date | null;
  previous_secret_last_used_time: Date | null;
  /** Which ways of authenticating the client accepts (0023): bearer, basic, client_credentials. */
  auth_methods: ColumnType<string[], string[] | undefined, string[]>;
  /** Whether its ServiceProviderConfig carries the RFC 9865 pagination block (0023). */
  spc_pagination: Generated<boolean>;
  activated_time: Date | null;
}

export interface InstanceSettingsTable {
  key: string;
  value: string;
}

export interface IdentitiesTable {
  id: string;
  organization_id: string;
  active: boolean;
  user_name: string;
  external_id: string | null;
  employee_number: string | null;
  /** The SCIM attributes as last written, minus id, meta, groups and password. */
  scim: Json<Record<string, unknown>>;
  traits: Json<Record<string, unknown>>;
  password_hash: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Incremented by every update: the guard of optimistic writes. */
  version: Generated<number>;
  /** Written with the document: the enterprise manager's value when a UUID; `updated_at` to the hour (0044). */
  manager_id: string | null;
  modified_hour: Timestamp;
}

export interface IdentityIdentifiersTable {
  /** Lower-cased userName or email value: unique across the whole service. */
  value: string;
  identity_id: string;
  organization_id: string;
  kind: "userName" | "email";
}

/** The values of filterable or unique extension attributes (0010-scim-extensions). */
export interface IdentityExtensionValuesTable {
  identity_id: string;
  organization_id: string;
  /** `<schema URN>:<attribute>`, lower-cased. */
  attribute: string;
  /** The value as compared: lower-cased unless the attribute is caseExact. */
  value: string;
  /** SHA-256 of the value's UTF-8 bytes: what the indexes hold (0018-extension-limits). */
  value_digest: Uint8Array;
  is_unique: boolean;
}

/** The same index for groups (0014-group-extensions). */
export interface GroupExtensionValuesTable {
  group_id: string;
  organization_id: string;
  attribute: string;
  value: string;
  /** SHA-256 of the value's UTF-8 bytes: what the indexes hold (0018-extension-limits). */
  value_digest: Uint8Array;
  is_unique: boolean;
}

export interface DirectoryGroupsTable {
  id: string;
  organization_id: string;
  display_name: string;
  external_id: string | null;
  /** The group's extension objects keyed by schema URN (0014-group-extensions); null when it has none. */
  extensions: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** The row version (0020): every write of the group or its members changes it; meta.version is made from it. */
  version: ColumnType<string, string | number | undefined, string | number>;
}

export interface GroupUserMembersTable {
  group_id: string;
  identity_id: string;
  organization_id: string;
}

export interface GroupGroupMembersTable {
  group_id: string;
  member_group_id: string;
  organization_id: string;
}

export interface ApiKeysTable {
  key_id: string;
  kind: "issued" | "imported";
  organization_id: string | null;
  name: string;
  actor_id: string | null;
  /** Issued keys only: the visible start of the current secret (`rsk_…`). */
  prefix: string | null;
  scopes: Json<string[]>;
  metadata: Json<Record<string, unknown>>;
  rate_limits: Json<{ name: string; limit: number; period_seconds: number }[]>;
  expire_time: Date | null;
  revoke_time: Date | null;
  /** `ADMIN` (DELETE) or `ACTOR_DELETED` (the identity it acts for was deleted); null while not revoked. */
  revoke_reason: string | null;
  create_time: Timestamp;
  update_time: Timestamp;
  /** actor_id read as a UUID when it is one, computed by PostgreSQL (0009): the link to an identity. */
  actor_identity_id: GeneratedAlways<string | null>;
}

export interface ApiKeySecretsTable {
  /** SHA-256 of the secret or raw key; the raw value is never stored. */
  digest: Buffer;
  key_id: string;
  /** Set when rotation supersedes this secret: it verifies until then (grace period). */
  expire_time: Date | null;
  create_time: Timestamp;
}

export interface ApiKeyRateCountersTable {
  key_id: string;
  limit_name: string;
  window_start: Date;
  count: number;
}

/** Pending webhook deliveries (the transactional outbox); a row is deleted once its attempt is recorded. */
export interface WebhookOutboxTable {
  seq: Generated<number>;
  /** The event id: the `webhook-id` header of every delivery of this event. */
  id: string;
  client_id: string;
  organization_id: string;
  event: string;
  /** The resource id: events of one key are delivered in commit order. */
  ordering_key: string;
  /** The exact JSON body that is signed and sent. */
  body: string;
  created_at: Timestamp;
  claimed_until: Timestamp | null;
  claim_token: string | null;
  /** The dispatcher that holds the claim (webhook_dispatchers.id). */
  claimed_by: string | null;
  /** Attempts that really started (0008-webhook-crash-safety). */
  attempts: Generated<number>;
  /** Started attempts that a takeover found unfinished (their dispatcher died). */
  interrupted: Generated<number>;
  /** Set while an attempt is under way. */
  attempt_started_at: Timestamp | null;
  /** A failed delivery to retry (webhook.retry = backoff): not claimable before this time. */
  next_attempt_at: Timestamp | null;
  /** The W3C traceparent of the request that wrote the row; null when tracing is off (0013). */
  traceparent: string | null;
}

/** The endpoint of a deleted connection while it still owes outbox rows (0031-retired-webhooks). */
export interface RetiredWebhooksTable {
  client_id: string;
  /** The last outbox row it owes: rows of the client id up to this one go to this endpoint. */
  last_seq: number;
  organization_id: string;
  webhook_url: string;
  webhook_secret_sealed: string | null;
  webhook_retry: string;
  retire_time: Timestamp;
}

/** Every directory change as an event (0012-directory-events; docs/events.md). */
export interface DirectoryEventsTable {
  id: string;
  seq: Generated<number>;
  /** xid8 as text: the writing transaction. */
  txid: Generated<string>;
  organization_id: string;
  /** The connection the event concerns; null for an event of the organization alone (0025). */
  directory_id: string | null;
  /** `scim` (a SCIM client's request) or `admin` (the admin API). */
  source: Generated<"scim" | "admin">;
  event: string;
  create_time: Timestamp;
  /** The webhook payload's `data`, as JSON text. */
  data: string;
  /** A held event's release into the feed, which retention counts from (0033); null otherwise. */
  release_time: Timestamp | null;
}

/** The webhook event log: one row per delivery attempt, kept while `log_webhook_events` is on. */
export interface WebhookEventsTable {
  id: string;
  event_id: string;
  client_id: string;
  organization_id: string;
  event: string;
  payload: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  success: boolean;
  resend: Generated<boolean>;
  attempted_at: Timestamp;
  /** The attempt's number for its event (1 = the first). */
  attempt: Generated<number>;
  /** Where the event stood after this attempt: delivered, retrying, failed (null: logged before retries existed). */
  state: string | null;
  next_attempt_time: Timestamp | null;
  /** The headers sent and the answer's first 4 KiB (0015); null when nothing was sent or read. */
  request_headers: ColumnType<Record<string, string> | null, string | null, string | null>;
  response_body: string | null;
  response_body_truncated: boolean | null;
}

/** Users and groups per organization, kept by triggers (0007-list-reads); a total is the sum of the shards. */
export interface ResourceCountsTable {
  organization_id: string;
  /** `active_users`: the users whose `active` is true (0035-active-user-counts), for the deprovisioning guard. */
  resource: "users" | "groups" | "active_users";
  shard: number;
  n: number;
}
