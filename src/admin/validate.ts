import { invalidArgument } from "./errors.js";

/** Edge validation for admin request bodies: typed reads that fail with INVALID_ARGUMENT. */
export type JsonObject = Record<string, unknown>;

export const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

export function requireObject(v: unknown, what = "request body"): JsonObject {
  if (!isObject(v)) throw invalidArgument(`${what} must be a JSON object`);
  return v;
}

export function optionalString(body: JsonObject, field: string, max = 1024): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw invalidArgument(`${field} must be a string`);
  if (v.length > max) throw invalidArgument(`${field} must be at most ${max} characters`);
  return v;
}

export function requireString(body: JsonObject, field: string, max = 1024): string {
  const v = optionalString(body, field, max);
  if (v === undefined || v.trim() === "") throw invalidArgument(`${field} is required`);
  return v;
}

export function optionalBoolean(body: JsonObject, field: string): boolean | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") throw invalidArgument(`${field} must be a boolean`);
  return v;
}

export function optionalStringArray(body: JsonObject, field: string, maxItems = 100): string[] | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string"))
    throw invalidArgument(`${field} must be an array of strings`);
  if (v.length > maxItems) throw invalidArgument(`${field} must have at most ${maxItems} items`);
  return v as string[];
}

export function optionalObject(body: JsonObject, field: string): JsonObject | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw invalidArgument(`${field} must be a JSON object`);
  return v;
}

/** Only http(s) URLs with a host; the webhook sender refuses anything else too. */
export function validateHttpUrl(raw: string, field: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidArgument(`${field} must be an absolute http:// or https:// URL`);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") {
    throw invalidArgument(`${field} must be an absolute http:// or https:// URL`);
  }
  if (url.username !== "" || url.password !== "") throw invalidArgument(`${field} must not carry credentials`);
  return url.toString();
}
