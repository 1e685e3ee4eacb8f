import type { RequestLogMode } from "../../storage/schema.js";
import type { ExtensionDeclaration, IndexedAttribute, UnknownExtensions } from "./extensions.js";

/** A SCIM client = a directory sync connection: an identity provider pushing into one organization. */
export interface ScimClient {
  readonly clientId: string;
  readonly organizationId: string;
  readonly name: string;
  readonly secretHash: string;
  readonly autoLink: boolean;
  readonly mapping: string | null;
  readonly tenant: string;
  readonly product: string;
  readonly webhookUrl: string | null;
  /** Sealed with ROSTER_SECRETS; open it only to sign a delivery. */
  readonly webhookSecretSealed: string | null;
  readonly logWebhookEvents: boolean;
  /** Which of its SCIM requests the request log keeps (docs/operations.md). */
  readonly requestLog: RequestLogMode;
  /** Declared custom schema extensions (docs/scim-extensions.md). */
  readonly extensions: readonly ExtensionDeclaration[];
  /** Bytes of the declaration as JSON: what a list page and the client cache count (docs/scim-extensions.md). */
  readonly extensionsBytes: number;
  readonly unknownExtensions: UnknownExtensions;
  /** The extension attributes whose values are indexed for eq filters and uniqueness; empty for most clients. */
  readonly indexedAttributes: readonly IndexedAttribute[];
  /** Whether a failed webhook delivery is retried (docs/webhooks.md "Retries"). */
  readonly webhookRetry: WebhookRetry;
  /** What a group PATCH without a projection answers (docs/scim-groups.md "What a PATCH answers"). */
  readonly groupPatchResponse: GroupPatchResponse;
  readonly createTime: Date;
  readonly updateTime: Date;
  /** When the secret last changed (`:rotateSecret`, or a PATCH of `secret`); null if never since creation. */
  readonly secretRotateTime: Date | null;
  /** The replaced secret's hash, accepted until `previousSecretExpireTime` (a rotation's grace period). */
  readonly previousSecretHash: string | null;
  readonly previousSecretExpireTime: Date | null;
  /** The last time the previous secret authenticated a request (recorded at most once a minute per instance). */
  readonly previousSecretLastUsedTime: Date | null;
  /** The ways of authenticating it accepts, all of them proofs of its secret (docs/scim-authentication.md). */
  readonly authMethods: readonly AuthMethod[];
  /** Whether its ServiceProviderConfig carries the RFC 9865 pagination block. */
  readonly spcPagination: boolean;
  /** When it first answered a SCIM request with success (`connection.activated`); null until then. */
  readonly activatedTime: Date | null;
}

/** The secret itself as a bearer token, HTTP Basic (client id and secret), or OAuth 2.0 client credentials. */
export const AUTH_METHODS = ["bearer", "basic", "client_credentials"] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];
/**
 * What a connection accepts unless told otherwise: its secret as a bearer value and the tokens it buys. Basic is
 * turned on for the IdPs configured for it, so that the ServiceProviderConfig of every other connection keeps its
 * one bearer scheme.
 */
export const DEFAULT_AUTH_METHODS: readonly AuthMethod[] = ["bearer", "client_credentials"];

export const WEBHOOK_RETRY_MODES = ["none", "backoff"] as const;
export type WebhookRetry = (typeof WEBHOOK_RETRY_MODES)[number];

/** `no_content`: 204 (the default); `full`: 200 with the whole group, members included. */
export const GROUP_PATCH_RESPONSES = ["no_content", "full"] as const;
export type GroupPatchResponse = (typeof GROUP_PATCH_RESPONSES)[number];

export interface ScimClientInput {
  readonly organizationId: string;
  readonly clientId: string;
  readonly secret: string;
  readonly name: string;
  readonly autoLink: boolean;
  readonly mapping: string | null;
  readonly tenant: string;
  readonly product: string;
  readonly webhook: { readonly url: string; readonly secret: string | null } | null;
  readonly logWebhookEvents: boolean;
  readonly requestLog?: RequestLogMode;
  readonly extensions?: readonly ExtensionDeclaration[];
  readonly unknownExtensions?: UnknownExtensions;
  readonly webhookRetry?: WebhookRetry;
  readonly authMethods?: readonly AuthMethod[];
  readonly spcPagination?: boolean;
  readonly groupPatchResponse?: GroupPatchResponse;
  /** Created through this setup link: it starts with the link's webhook, or the organization's (docs/setup-links.md). */
  readonly setupLinkId?: string;
}

/** The changes a client's settings take as given; only the two secrets differ between a request and what is stored. */
interface ScimClientSettingChanges {
  name?: string;
  autoLink?: boolean;
  mapping?: string | null;
  tenant?: string;
  product?: string;
  webhookUrl?: string | null;
  logWebhookEvents?: boolean;
  requestLog?: RequestLogMode;
  extensions?: readonly ExtensionDeclaration[];
  unknownExtensions?: UnknownExtensions;
  webhookRetry?: WebhookRetry;
  authMethods?: readonly AuthMethod[];
  spcPagination?: boolean;
  groupPatchResponse?: GroupPatchResponse;
}

/** Changes to apply; `undefined` leaves a field as it is, `null` clears it. */
export interface ScimClientChanges extends ScimClientSettingChanges {
  secret?: string;
  webhookSecret?: string | null;
}

/** What the repository stores for a change: the secret already hashed, the webhook secret already sealed. */
export interface StoredScimClientChanges extends ScimClientSettingChanges {
  secretHash?: string;
  webhookSecretSealed?: string | null;
}

/** A new client as stored: the secret already hashed, the webhook secret already sealed. */
export type NewScimClientRow = Pick<
  ScimClient,
  | "clientId"
  | "organizationId"
  | "name"
  | "secretHash"
  | "autoLink"
  | "mapping"
  | "tenant"
  | "product"
  | "webhookUrl"
  | "webhookSecretSealed"
  | "logWebhookEvents"
  | "requestLog"
  | "extensions"
  | "unknownExtensions"
  | "webhookRetry"
  | "authMethods"
  | "spcPagination"
  | "groupPatchResponse"
> & { readonly now: Date; readonly setupLinkId?: string };
