import { Type } from "@sinclair/typebox";
import { AUTH_METHODS, GROUP_PATCH_RESPONSES, WEBHOOK_RETRY_MODES } from "../../directory/scim-clients/types.js";
import {
  AnyObject,
  Checked,
  Duration,
  Enum,
  Nullable,
  NullableText,
  NullableTime,
  OptionalFlag,
  OptionalText,
  PageQuery,
  Time,
  UUID_PATTERN,
  Wrapped,
} from "./kit.js";
import { GuardSettingsBody } from "./deprovisioning-guard.js";
import { Extensions } from "./scim-client-extensions.js";

/** SCIM client bodies, the mapping test, and a client's webhook event log. */

export const CLIENT_ID_PATTERN = "^[A-Za-z0-9._~-]{1,128}$";
export const MAX_MAPPING_LENGTH = 256 * 1024;

export const Retry = Type.Optional(
  Nullable(Enum(WEBHOOK_RETRY_MODES, '{path} must be "none" or "backoff"', "Retry failed deliveries (default none)")),
);
const RequestLog = Type.Optional(
  Nullable(Enum(["errors", "all", "off"] as const, "{path} must be one of errors, all, off", "Default errors")),
);
const GroupPatchResponse = Type.Optional(
  Nullable(
    Enum(
      GROUP_PATCH_RESPONSES,
      '{path} must be "no_content" or "full"',
      "What a group PATCH without attributes/excludedAttributes answers: no_content (204, default) or full (200)",
    ),
  ),
);
const UnknownExtensions = Type.Optional(
  Nullable(Enum(["reject", "store"] as const, '{path} must be "reject" or "store"', "Default reject")),
);
const AuthMethods = Type.Optional(
  Nullable(
    Checked(
      Type.Array(Enum(AUTH_METHODS), {
        minItems: 1,
        uniqueItems: true,
        description:
          "How the identity provider may authenticate: bearer (the secret), basic (client id and secret), " +
          "client_credentials (OAuth 2.0 tokens from {scim_base_url}/oauth/token); default bearer and client_credentials",
      }),
      "{path} must be a non-empty list of distinct values among bearer, basic, client_credentials",
    ),
  ),
);
const SpcPagination = OptionalFlag(
  "Whether the ServiceProviderConfig carries the RFC 9865 pagination block (default true; some SCIM client libraries refuse it)",
);

/** The settings a create and a patch both take, in the same form. */
const Settings = {
  log_webhook_events: OptionalFlag(),
  request_log: RequestLog,
  extensions: Extensions,
  unknown_extensions: UnknownExtensions,
  authentication_methods: AuthMethods,
  service_provider_config_pagination: SpcPagination,
  group_patch_response: GroupPatchResponse,
  deprovisioning_guard: Type.Optional(Nullable(GuardSettingsBody)),
};

export const CreateScimClientBody = Type.Object({
  organization_id: Checked(Type.String({ pattern: UUID_PATTERN, "x-required": true }), {
    pattern: "{path} must be a UUID",
  }),
  client_id: Type.Optional(
    Checked(Nullable(Type.String({ maxLength: 128, pattern: CLIENT_ID_PATTERN, description: "Default: generated" })), {
      pattern: "client_id may use only letters, digits and . _ ~ - (at most 128 characters)",
    }),
  ),
  secret: OptionalText(1024, "The shared secret, without a Bearer prefix; default: generated and shown once"),
  name: OptionalText(256),
  auto_link: OptionalFlag(),
  mapping: OptionalText(MAX_MAPPING_LENGTH, "A data mapping expression or URL"),
  tenant: OptionalText(256),
  product: OptionalText(256),
  webhook: Type.Optional(
    Nullable(
      Type.Object({
        url: OptionalText(2048, "An absolute http:// or https:// URL"),
        secret: OptionalText(1024, "At least 16 characters"),
        retry: Retry,
      }),
    ),
  ),
  ...Settings,
});

const PatchText = Type.Optional(NullableText);

export const ScimClientPatch = Type.Object({
  client_id: Type.Optional(Type.Unknown({ description: "When a string, it must be the one in the path" })),
  name: PatchText,
  secret: PatchText,
  auto_link: OptionalFlag(),
  mapping: PatchText,
  tenant: PatchText,
  product: PatchText,
  webhook: Type.Optional(Nullable(Type.Object({ url: PatchText, secret: PatchText, retry: Retry }))),
  ...Settings,
});

/** `{scim_client: {...}}` or the fields themselves; `update_mask` names what changes. */
export const UpdateScimClientBody = Wrapped("scim_client", ScimClientPatch);

export const RotateSecretBody = Type.Object(
  {
    grace_period: Type.Optional(
      Duration("How long the replaced secret keeps working (default 0: it stops at once; at most 7 days)"),
    ),
  },
  { "x-optional-body": true },
);

export const ClientParams = Type.Object({ clientId: Type.String() });
export const ListClientsQuery = Type.Object({ ...PageQuery, organization_id: Type.Optional(Type.String()) });
export const UpdateMaskQuery = Type.Object({
  update_mask: Type.Optional(Type.String({ description: "Comma-separated field paths" })),
});

export const ScimClientJson = Type.Object({
  client_id: Type.String(),
  organization_id: Type.String(),
  name: Type.String(),
  scim_base_url: Type.String(),
  auto_link: Type.Boolean(),
  mapping: NullableText,
  tenant: Type.String(),
  product: Type.String(),
  webhook: Nullable(Type.Object({ url: Type.String(), secret_set: Type.Boolean(), retry: Type.String() })),
  log_webhook_events: Type.Boolean(),
  secret_rotate_time: NullableTime,
  previous_secret_expire_time: NullableTime,
  previous_secret_last_used_time: NullableTime,
  activated_time: Nullable(
    Type.String({ description: "When the connection first answered a SCIM request with success; null until then" }),
  ),
  request_log: Type.String(),
  extensions: Type.Array(AnyObject()),
  unknown_extensions: Type.String(),
  authentication_methods: Type.Array(Type.String()),
  basic_username: Type.String({ description: "The user name of HTTP Basic: the client id" }),
  oauth_token_url: Type.String({ description: "The OAuth 2.0 token endpoint of the client-credentials grant" }),
  service_provider_config_pagination: Type.Boolean(),
  group_patch_response: Type.String(),
  create_time: Time,
  update_time: Time,
  secret: Type.Optional(Type.String({ description: "Shown once: on create when generated, and on rotation" })),
});

export const TestMappingBody = Type.Object({
  mapping: OptionalText(MAX_MAPPING_LENGTH, "A mapping to try instead of the client's"),
  user: Checked(AnyObject("A SCIM user"), "user must be a JSON object"),
});

export const TraitsJson = Type.Object({ traits: Type.Unknown() });
export const WebhookSecretJson = Type.Object({ secret: Type.String({ description: "whsec_…" }) });

export const WebhookEventsQuery = Type.Object({
  ...PageQuery,
  event: Type.Optional(Type.String({ description: "An event kind" })),
  success: Type.Optional(Type.String({ description: "true or false" })),
});
export const EventParams = Type.Object({ clientId: Type.String(), eventId: Type.String() });

export const BulkResendBody = Type.Object({
  state: Checked(Type.Literal("failed"), 'state must be "failed"'),
  since: OptionalText(64, "RFC 3339; default: everything the event log keeps"),
});
export const QueuedJson = Type.Object({ queued: Type.Integer() });

export const WebhookEventJson = Type.Object({
  id: Type.String(),
  event_id: Type.String(),
  directory_id: Type.String(),
  event: Type.String(),
  success: Type.Boolean(),
  status_code: Nullable(Type.Integer()),
  error: NullableText,
  duration_ms: Nullable(Type.Number()),
  resend: Type.Boolean(),
  attempt: Type.Integer(),
  state: Type.String(),
  next_attempt_time: NullableTime,
  attempt_time: Time,
  payload: Type.Unknown(),
  request_headers: Type.Record(Type.String(), Type.String(), {
    description: "The headers sent, signatures included (never the secret); {} when nothing was sent",
  }),
  response_body: Nullable(Type.String({ description: "The receiver's answer, its first 4 KiB" })),
  response_body_truncated: Type.Boolean(),
});

export const EventsQuery = Type.Object({
  organization_id: Type.Optional(Type.String({ description: "Required" })),
  directory_id: Type.Optional(Type.String()),
  event: Type.Optional(Type.String({ description: "Comma-separated event kinds" })),
  page_size: Type.Optional(Type.String({ description: "1 to 1000, default 100" })),
  after: Type.Optional(Type.String({ description: "next_after of the previous page, or now" })),
});
export const EventJson = Type.Object({
  id: Type.String(),
  event: Type.String(),
  organization_id: Type.String(),
  directory_id: NullableText,
  source: Type.Union([Type.Literal("scim"), Type.Literal("admin")]),
  create_time: Time,
  data: AnyObject(),
});
