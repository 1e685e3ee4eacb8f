import { type TSchema, Type } from "@sinclair/typebox";
import {
  MAX_ACTOR_ID_LENGTH,
  MAX_BATCH_IMPORT,
  MAX_NAME_LENGTH,
  MAX_RATE_LIMITS,
  MAX_RAW_KEY_LENGTH,
  MAX_SCOPE_LENGTH,
  MAX_SCOPES,
  MIN_RAW_KEY_LENGTH,
} from "../../apikeys/model.js";
import {
  AnyObject,
  Checked,
  Duration,
  type Message,
  Nullable,
  NullableText,
  NullableTime,
  OptionalTime,
  PageQuery,
  Time,
  UUID_PATTERN,
} from "./kit.js";

/** API key bodies (docs/api-keys.md). Fields the key carries; absent, null or empty means "none". */

const scopesMessage = `{parent} must be an array of non-empty strings of at most ${MAX_SCOPE_LENGTH} characters`;
const Scopes = Checked(
  Nullable(
    Type.Array(Checked(Type.String({ minLength: 1, maxLength: MAX_SCOPE_LENGTH }), scopesMessage), {
      maxItems: MAX_SCOPES,
      description: "Scopes, in order; repeats are dropped",
    }),
  ),
  {
    maxItems: `{path} must have at most ${MAX_SCOPES} items`,
    default: `{path} must be an array of non-empty strings of at most ${MAX_SCOPE_LENGTH} characters`,
  },
);

export const RateLimitBody = Checked(
  Type.Object({
    name: Type.Optional(
      Checked(Nullable(Type.String({ pattern: "^[A-Za-z0-9_.:-]{1,64}$", description: 'Default "default"' })), {
        default: "{path} must be 1-64 letters, digits or _ . : -",
      }),
    ),
    limit: Checked(Type.Integer({ minimum: 1, maximum: 1_000_000_000 }), {
      default: "{path} must be an integer from 1 to 1000000000",
    }),
    period: Duration('The window, "60s" or 60', false),
  }),
  { type: "{path} must be an object {name, limit, period}" },
);

export const RateLimitsBody = Checked(Nullable(Type.Array(RateLimitBody, { maxItems: MAX_RATE_LIMITS })), {
  maxItems: `{path} must have at most ${MAX_RATE_LIMITS} items`,
  default: "{path} must be an array of {name, limit, period}",
});

const keyFields = {
  actor_id: Type.Optional(
    Nullable(Type.String({ maxLength: MAX_ACTOR_ID_LENGTH, description: "Who the key acts for" })),
  ),
  scopes: Type.Optional(Scopes),
  metadata: Type.Optional(Nullable(AnyObject(`Any JSON object, at most 16 KiB`))),
  rate_limits: Type.Optional(RateLimitsBody),
  expire_time: OptionalTime(),
};

const Name = Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH, "x-required": true });

const organizationId = (message: Message) =>
  Type.Optional(Checked(Nullable(Type.String({ pattern: `^$|${UUID_PATTERN}` })), message));

export const CreateIssuedKeyBody = Type.Object({
  organization_id: organizationId("{path} must be a UUID"),
  name: Name,
  ...keyFields,
});

export const ImportItemBody = Checked(
  Type.Object({
    raw_key: Checked(
      Type.String({ minLength: MIN_RAW_KEY_LENGTH, maxLength: MAX_RAW_KEY_LENGTH, "x-required": true }),
      {
        minLength: `{path} must be ${MIN_RAW_KEY_LENGTH} to ${MAX_RAW_KEY_LENGTH} characters`,
        maxLength: `{path} must be ${MIN_RAW_KEY_LENGTH} to ${MAX_RAW_KEY_LENGTH} characters`,
      },
    ),
    organization_id: organizationId({ pattern: "{path} must be a UUID" }),
    name: Name,
    ...keyFields,
    actor_id: Type.String({ maxLength: MAX_ACTOR_ID_LENGTH, "x-required": true, description: "Who the key acts for" }),
  }),
  { type: "{path} must be a JSON object" },
);

const requests = (item: TSchema) =>
  Checked(Type.Array(item, { minItems: 1, maxItems: MAX_BATCH_IMPORT }), {
    type: "requests must be an array of import items",
    required: "requests must be an array of import items",
    default: `requests must hold 1 to ${MAX_BATCH_IMPORT} items; got {length}`,
  });

export const ImportBatchBody = Type.Object({ requests: requests(ImportItemBody) });

/** What the route validates: each item is checked on its own (a bad one is its own result), not the batch. */
export const ImportBatchEnvelope = Type.Object({ requests: requests(Type.Unknown()) });

/** The update of an issued key: the fields named by `update_mask` (or every populated one) change. */
export const UpdateIssuedKeyBody = Type.Object(
  {
    issued_api_key: Checked(
      Type.Object({
        key_id: Type.Optional(NullableText),
        name: Type.Optional(Nullable(Type.String({ maxLength: MAX_NAME_LENGTH }))),
        ...keyFields,
      }),
      "issued_api_key must be a JSON object",
    ),
  },
  { "x-wrapper": "issued_api_key" },
);

export const RotateBody = Type.Object(
  { grace_period: Type.Optional(Duration("How long the previous secret keeps verifying (default 0, at most 24 h)")) },
  { "x-optional-body": true },
);

export const VerifyBody = Type.Object({
  key: Checked(Type.String({ minLength: 1, description: "The raw API key" }), "key must be a non-empty string"),
});

export const KeyParams = Type.Object({ keyId: Type.String() });

export const ListKeysQuery = Type.Object({
  ...PageQuery,
  organization_id: Type.Optional(Type.String()),
  actor_id: Type.Optional(Type.String()),
  show_revoked: Type.Optional(Type.String({ description: "true or false" })),
});

export const UpdateKeyQuery = Type.Object({
  update_mask: Type.Optional(
    Type.Union([Type.String(), Type.Array(Type.String())], { description: "Comma-separated field paths" }),
  ),
});

const RateLimitJson = Type.Object({ name: Type.String(), limit: Type.Integer(), period: Type.String() });

export const ApiKeyJson = Type.Object({
  key_id: Type.String(),
  prefix: Type.Optional(Type.String({ description: "Issued keys only" })),
  name: Type.String(),
  organization_id: NullableText,
  actor_id: NullableText,
  scopes: Type.Array(Type.String()),
  metadata: AnyObject(),
  rate_limits: Type.Array(RateLimitJson),
  expire_time: NullableTime,
  state: Type.String({ enum: ["ACTIVE", "EXPIRED", "REVOKED", "SUSPENDED"] }),
  suspend_reason: Type.Optional(Type.String()),
  revoke_time: NullableTime,
  revoke_reason: NullableText,
  create_time: Time,
  update_time: Time,
});

export const ApiKeyWithSecretJson = Type.Composite([
  ApiKeyJson,
  Type.Object({
    secret: Type.String({ description: "Shown once" }),
    previous_secret_expire_time: Type.Optional(Time),
  }),
]);

export const ImportResultsJson = Type.Object({
  results: Type.Array(
    Type.Object({
      index: Type.Integer(),
      imported_api_key: Type.Optional(ApiKeyJson),
      error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
    }),
  ),
  success_count: Type.Integer(),
  failure_count: Type.Integer(),
});

const RateLimitStatusJson = Type.Object({ limit: Type.Integer(), remaining: Type.Integer(), reset_time: Time });

export const VerifyJson = Type.Object({
  valid: Type.Boolean(),
  reason: Type.Optional(Type.String({ description: "Why an invalid key is invalid" })),
  key_id: Type.Optional(Type.String()),
  kind: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  organization_id: Type.Optional(NullableText),
  actor_id: Type.Optional(NullableText),
  scopes: Type.Optional(Type.Array(Type.String())),
  metadata: Type.Optional(AnyObject()),
  expire_time: Type.Optional(NullableTime),
  revoke_reason: Type.Optional(NullableText),
  rate_limit: Type.Optional(RateLimitStatusJson),
});
