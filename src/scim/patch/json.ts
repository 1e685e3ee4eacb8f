import type { JsonObject, JsonValue } from "./types.js";

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A deep copy of a JSON value. Plain recursion: structuredClone goes through V8's serializer and cost a PATCH more
 * CPU than the rest of applying it. An own `__proto__` key (JSON.parse makes one) stays an own key, never a prototype.
 */
export const clone = <T extends JsonValue>(value: T): T => copyJson(value) as T;

function copyJson(value: JsonValue): JsonValue {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(copyJson);
  const out: JsonObject = {};
  for (const key of Object.keys(value)) {
    const copy = copyJson(value[key] as JsonValue);
    if (key === "__proto__")
      Object.defineProperty(out, key, { value: copy, writable: true, enumerable: true, configurable: true });
    else out[key] = copy;
  }
  return out;
}

/** Structural equality, independent of key order. */
export const deepEqual = (a: JsonValue | undefined, b: JsonValue | undefined): boolean => {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
};

/** RFC 7644 §3.5.2: null, {} and [] are all "unassigned". */
export const isUnassigned = (value: JsonValue | undefined): boolean =>
  value === undefined ||
  value === null ||
  (Array.isArray(value) && value.length === 0) ||
  (isObject(value) && Object.keys(value).length === 0);

/** Finds a key case-insensitively (RFC 7643 §2.1: attribute names are case-insensitive). */
export const findKey = (object: JsonObject, name: string): string | undefined => {
  if (Object.hasOwn(object, name)) return name;
  const lower = name.toLowerCase();
  return Object.keys(object).find((k) => k.toLowerCase() === lower);
};
