import { type Static, type TSchema, Type } from "@sinclair/typebox";

/**
 * Building blocks of the admin API schemas. Annotations the validator reads (src/admin/validation.ts):
 * - `x-message`: the message of a refusal, a template with `{path}` (where, as `rate_limits[0].limit`) and `{length}`
 *   (an array's length); a string for every keyword, or an object by keyword with an optional `default`;
 * - `x-required`: a null, empty or blank value is "{path} is required", as a missing one is.
 * Lengths are in UTF-16 code units, as JavaScript counts them.
 */

export type Message = string | Readonly<Record<string, string>>;

const withMessage = (message: Message | undefined) => (message === undefined ? {} : { "x-message": message });

/** `T` or null; a null is what clients send for "not set" (ajv's `type` list: one error, not an anyOf of two). */
export const Nullable = <T extends TSchema>(schema: T) => {
  const type = (schema as { type?: string | string[] }).type;
  const types = Array.isArray(type) ? type : type === undefined ? [] : [type];
  const values = (schema as { enum?: unknown[] }).enum;
  return Type.Unsafe<Static<T> | null>({
    ...schema,
    type: [...types, "null"],
    ...(values === undefined ? {} : { enum: [...values, null] }),
  });
};

/** A string that must hold something besides whitespace. */
export const RequiredText = (maxLength: number, description?: string) =>
  Type.String({ maxLength, pattern: "\\S", "x-required": true, ...(description === undefined ? {} : { description }) });

/** A string that may be absent or null. */
export const OptionalText = (maxLength: number, description?: string) =>
  Type.Optional(Nullable(Type.String({ maxLength, ...(description === undefined ? {} : { description }) })));

export const OptionalFlag = (description?: string) =>
  Type.Optional(Nullable(Type.Boolean(description === undefined ? {} : { description })));

export const UUID_PATTERN = "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$";

/** RFC 3339 with an explicit offset; the calendar check (month 13) is the reader's. */
export const RFC3339_PATTERN = "^\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?([Zz]|[+-]\\d{2}:\\d{2})$";

/** An RFC 3339 timestamp, or "" / null for none. */
export const OptionalTime = (message = "{path} must be an RFC 3339 timestamp such as 2026-12-31T23:59:59Z") =>
  Type.Optional(
    Type.Unsafe<string | null>({
      type: ["string", "null"],
      pattern: `^$|${RFC3339_PATTERN}`,
      description: "RFC 3339 timestamp, e.g. 2026-12-31T23:59:59Z",
      "x-message": message,
    }),
  );

/** A duration in whole seconds: `"3600s"` (protobuf JSON) or `3600`; its bound is checked by parseDuration. */
export const Duration = (description: string, nullable = true) =>
  Type.Unsafe<string | number | null>({
    type: nullable ? ["string", "integer", "null"] : ["string", "integer"],
    pattern: "^\\d{1,10}s$",
    minimum: 0,
    description,
    "x-message": '{path} must be a duration like "3600s" or whole seconds',
  });

export const Enum = <const V extends readonly string[]>(values: V, message?: Message, description?: string) =>
  Type.Unsafe<V[number]>({
    type: "string",
    enum: [...values],
    ...withMessage(message),
    ...(description === undefined ? {} : { description }),
  });

/** A JSON object of any content (metadata, traits, SCIM documents). */
export const AnyObject = (description?: string) =>
  Type.Record(Type.String(), Type.Unknown(), description === undefined ? {} : { description });

/** An optional value whose refusal reads `message`, whatever the keyword. */
export const Checked = <T extends TSchema>(schema: T, message: Message) =>
  Type.Unsafe<Static<T>>({ ...schema, "x-message": message });

/**
 * A PATCH body that may wrap the resource (`{"scim_client": {...}}`, AIP-134) or be the resource itself: when `key`
 * holds an object it is the resource and the rest is ignored, as the handler reads it.
 */
export const Wrapped = <T extends TSchema>(key: string, inner: T) =>
  Type.Unsafe<Static<T> & Partial<Record<string, Static<T>>>>({
    type: "object",
    "x-wrapper": key,
    if: { type: "object", required: [key], properties: { [key]: { type: "object" } } },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else, never awaited.
    then: { type: "object", properties: { [key]: inner } },
    else: inner,
  });

/** The admin error body of every refusal. */
export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.Integer({ description: "The HTTP status" }),
      status: Type.String({ description: "google.rpc status name, e.g. INVALID_ARGUMENT" }),
      message: Type.String(),
      details: Type.Array(Type.Unknown()),
    }),
  },
  { $id: "AdminError", description: "The admin API error body" },
);

export const Empty = Type.Object({}, { description: "An empty object" });

/** AIP-158 paging of a list. */
export const PageQuery = {
  page_size: Type.Optional(Type.String({ description: "Items per page (default 50, at most 1000)" })),
  page_token: Type.Optional(Type.String({ description: "next_page_token of the previous page" })),
};

export const Page = <T extends TSchema>(key: string, item: T) =>
  Type.Object({ [key]: Type.Array(item), next_page_token: Type.String({ description: '"" on the last page' }) });

/** The schema of a list route: its query, and a page of `item`s under `key` or an admin error. */
export const pageSchema = <T extends TSchema>(tags: string[], querystring: TSchema, key: string, item: T) => ({
  tags,
  querystring,
  response: { 200: Page(key, item), ...errors },
});

export const Time = Type.String({ description: "RFC 3339 timestamp" });
export const NullableTime = Nullable(Type.String({ description: "RFC 3339 timestamp" }));
export const NullableText = Nullable(Type.String());

/** Every 4xx/5xx answer of a route: the admin error body. */
export const errors = { "4xx": { $ref: "AdminError#" }, "5xx": { $ref: "AdminError#" } } as const;
