import type { Static, TSchema } from "@sinclair/typebox";
import AjvModule, { type ErrorObject, type ValidateFunction } from "ajv";
import type { FastifySchema, FastifySchemaCompiler } from "fastify";
import { type AdminError, invalidArgument } from "./errors.js";

/**
 * Validation of admin request bodies by their TypeBox schemas, refusals in the admin error body. Bodies are taken
 * as sent — no type coercion, no defaults, nothing removed — so a handler reads what the client wrote, and the
 * first problem found is the one reported, in the words the hand-written checks used (`name must be a string`).
 */
const Ajv = AjvModule.default;
const ajv = new Ajv({
  allErrors: false,
  coerceTypes: false,
  useDefaults: false,
  removeAdditional: false,
  verbose: true,
  strict: false,
  // Lengths in UTF-16 code units, as the limits are stated; also no per-character count of every checked string.
  unicode: false,
  // Ajv calls that option deprecated on every compile; it is still honoured, and there is nothing else to hear.
  logger: false,
});

/**
 * Limits of a whole value that JSON Schema cannot state, for bodies whose parts are each bounded but whose product
 * is not (docs/scim-extensions.md "Limits"): `x-max-json-bytes` (the value as JSON, in UTF-8 bytes) and
 * `x-max-total-items` (the items of every array under the named keys, at any depth). The `x-` prefix keeps them
 * valid OpenAPI extensions in the published document.
 */
ajv.addKeyword({
  keyword: "x-max-json-bytes",
  schemaType: "number",
  validate: (limit: number, data: unknown) => Buffer.byteLength(JSON.stringify(data) ?? "") <= limit,
});
ajv.addKeyword({
  keyword: "x-max-total-items",
  schemaType: "object",
  validate: (limit: { limit: number; under: readonly string[] }, data: unknown) =>
    itemsUnder(data, limit.under, limit.limit) <= limit.limit,
});

/** The items of the arrays under `keys` in `value`, counted until `stop` is passed. */
function itemsUnder(value: unknown, keys: readonly string[], stop: number, counted = 0): number {
  let n = counted;
  const visit = (v: unknown) => {
    if (Array.isArray(v)) for (const item of v) n = itemsUnder(item, keys, stop, n);
  };
  if (Array.isArray(value)) visit(value);
  else if (typeof value === "object" && value !== null) {
    for (const key of keys) {
      const inner = (value as Record<string, unknown>)[key];
      if (Array.isArray(inner)) {
        n += inner.length;
        if (n > stop) return n;
        visit(inner);
      }
    }
  }
  return n;
}

const cache = new WeakMap<object, ValidateFunction>();

const compile = (schema: object): ValidateFunction => {
  let validate = cache.get(schema);
  if (validate === undefined) {
    validate = ajv.compile(inOrder(schema as JsonSchema));
    cache.set(schema, validate);
  }
  return validate;
};

type JsonSchema = { [key: string]: unknown; properties?: Record<string, JsonSchema>; required?: string[] };

/**
 * The same schema, its properties checked one after the other in declaration order, each with its requiredness,
 * so the problem reported is the first field's, as a reader going down the fields finds it (ajv would report every
 * missing property before any wrong one).
 */
function inOrder(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...schema };
  for (const key of ["if", "then", "else", "items"] as const) {
    const sub = schema[key];
    if (typeof sub === "object" && sub !== null && !Array.isArray(sub)) out[key] = inOrder(sub as JsonSchema);
  }
  const { properties, required = [] } = schema;
  if (properties === undefined) return out;
  delete out.properties;
  delete out.required;
  const each = Object.entries(properties).map(([name, sub]) => ({
    properties: { [name]: inOrder(sub) },
    ...(required.includes(name) ? { required: [name] } : {}),
  }));
  out.allOf = [...((schema.allOf as JsonSchema[] | undefined) ?? []), ...each];
  // additionalProperties reads the properties of its own schema: they stay, each accepting anything.
  if (schema.additionalProperties === false)
    out.properties = Object.fromEntries(Object.keys(properties).map((k) => [k, {}]));
  return out;
}

/**
 * Annotations of a body schema's root: `x-optional-body` (an absent or null body is an empty one) and `x-wrapper`
 * (a PATCH body's wrapper key, `issued_api_key`, left out of the field names in messages).
 */
type BodyAnnotations = { "x-optional-body"?: boolean; "x-wrapper"?: string };

/**
 * Fastify's validator compiler for the admin scope. Query strings and paths are strings, declared for the
 * documentation and the types; their meaning (page sizes, UUIDs, tokens) is read by the handlers, which word it.
 */
export const adminValidatorCompiler: FastifySchemaCompiler<FastifySchema> = ({ schema, httpPart }) => {
  const validate = compile(schema);
  if (httpPart === "querystring") return firstValues(schema as TSchema, validate);
  if (httpPart !== "body") return validate;
  const { "x-optional-body": optional, "x-wrapper": wrapper } = schema as BodyAnnotations;
  return (data: unknown) => {
    // Fastify hands an absent body over as null (and the admin scope's JSON parser an empty one).
    if (data === null && optional === true) return true;
    if (data === null || data === undefined) return { error: invalidArgument("request body is empty") };
    if (validate(data)) return true;
    return { error: refusal(validate.errors ?? [], wrapper) };
  };
};

/**
 * A parameter sent twice (`?page_size=1&page_size=2`) counts once, by its first value, unless its schema takes a
 * list (`update_mask`).
 */
function firstValues(schema: TSchema, validate: ValidateFunction) {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const single = new Set(Object.keys(properties).filter((k) => properties[k]?.type === "string"));
  return (query: unknown) => {
    if (query !== null && typeof query === "object") {
      const q = query as Record<string, unknown>;
      for (const key of single) {
        const v = q[key];
        if (Array.isArray(v)) q[key] = typeof v[0] === "string" ? v[0] : undefined;
      }
    }
    return validate(query);
  };
}

/** A validator of one value (an item of a batch) whose refusal names its fields under `at` (`requests[3]`). */
export function valueChecker<T extends TSchema>(schema: T): (value: unknown, at: string) => Static<T> {
  const validate = compile(schema);
  return (value, at) => {
    if (!validate(value)) throw refusal(validate.errors ?? [], undefined, at);
    return value as Static<T>;
  };
}

function refusal(errors: readonly ErrorObject[], wrapper: string | undefined, root?: string): AdminError {
  // Without allErrors the last error is the one that failed; an if/then/else adds its own after the inner one.
  let error: ErrorObject | undefined;
  for (let i = errors.length - 1; i >= 0 && error === undefined; i--) {
    if (errors[i]?.keyword !== "if") error = errors[i];
  }
  if (error === undefined) return invalidArgument("the request body is not valid");
  return invalidArgument(messageOf(error, wrapper, root));
}

type Annotated = { "x-message"?: string | Record<string, string>; "x-required"?: boolean; type?: unknown };

function messageOf(error: ErrorObject, wrapper: string | undefined, root: string | undefined): string {
  let segments = error.instancePath
    .split("/")
    .slice(1)
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  let schema = (error.parentSchema ?? {}) as Annotated;
  if (error.keyword === "required") {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    segments = [...segments, missing];
    const properties = (schema as { properties?: Record<string, Annotated> }).properties;
    schema = properties?.[missing] ?? {};
  }
  if (wrapper !== undefined && segments[0] === wrapper) segments = segments.slice(1);
  const path = pathOf(segments, root);
  const blank = error.data === null || (typeof error.data === "string" && error.data.trim() === "");
  if (schema["x-required"] === true && blank && error.keyword !== "required") return `${path} is required`;
  const custom = schema["x-message"];
  const template = typeof custom === "string" ? custom : (custom?.[error.keyword] ?? custom?.default);
  if (template !== undefined) {
    const length = Array.isArray(error.data) ? String(error.data.length) : "";
    const parent = pathOf(segments.slice(0, -1), root);
    return template.replaceAll("{path}", path).replaceAll("{parent}", parent).replaceAll("{length}", length);
  }
  return `${path} ${generic(error)}`;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** `rate_limits[0].limit`, `metadata["odd key"]`; the whole body is "request body". */
function pathOf(segments: readonly string[], root: string | undefined): string {
  let out = root ?? "";
  for (const s of segments) {
    if (/^\d+$/.test(s)) out += `[${s}]`;
    else if (IDENTIFIER.test(s)) out += out === "" ? s : `.${s}`;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out === "" ? "request body" : out;
}

const ARTICLE: Record<string, string> = {
  string: "a string",
  boolean: "a boolean",
  object: "a JSON object",
  array: "an array",
  integer: "an integer",
  number: "a number",
};

function generic(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return "is required";
    case "type": {
      const first = String(params.type).split(",")[0] ?? "";
      return `must be ${ARTICLE[first] ?? first}`;
    }
    case "maxLength":
      return `must be at most ${String(params.limit)} characters`;
    case "maxItems":
      return `must have at most ${String(params.limit)} items`;
    case "minItems":
      return `must have at least ${String(params.limit)} items`;
    case "enum":
      return `must be one of ${(params.allowedValues as unknown[]).join(", ")}`;
    case "const":
      return `must be ${JSON.stringify(params.allowedValue)}`;
    case "additionalProperties":
      return `must not have the field ${String(params.additionalProperty)}`;
    default:
      return error.message ?? "is not valid";
  }
}
