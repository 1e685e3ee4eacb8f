import { ScimError } from "../errors.js";

export const SEARCH_REQUEST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:SearchRequest";

const STRINGS = ["filter", "sortBy", "sortOrder", "cursor"] as const;
const INTEGERS = ["startIndex", "count"] as const;
const LISTS = ["attributes", "excludedAttributes"] as const;
const ALLOWED = new Set<string>(["schemas", ...STRINGS, ...INTEGERS, ...LISTS]);

const invalid = (detail: string) => new ScimError(400, "invalidSyntax", detail);

/**
 * RFC 7644 §3.4.3: a SearchRequest body, as the query parameters of the matching GET (so one parser, one set of
 * rules and one cursor digest serve both). Attribute lists may be arrays or comma-separated strings.
 */
export function searchQueryOf(body: unknown): Record<string, string> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalid("the body of a search must be a SearchRequest object");
  }
  const b = body as Record<string, unknown>;
  const schemas = b.schemas;
  if (
    !Array.isArray(schemas) ||
    !schemas.some((s) => typeof s === "string" && s.toLowerCase() === SEARCH_REQUEST_SCHEMA.toLowerCase())
  ) {
    throw invalid(`schemas must be ["${SEARCH_REQUEST_SCHEMA}"]`);
  }
  const unknown = Object.keys(b).filter((k) => !ALLOWED.has(k));
  if (unknown.length > 0) {
    throw invalid(`unknown SearchRequest attribute ${unknown.join(", ")}: allowed are ${[...ALLOWED].join(", ")}`);
  }
  const q: Record<string, string> = {};
  for (const name of STRINGS) {
    const v = b[name];
    if (v === undefined || v === null) continue;
    if (typeof v !== "string") throw invalid(`${name} must be a string`);
    q[name] = v;
  }
  for (const name of INTEGERS) {
    const v = b[name];
    if (v === undefined || v === null) continue;
    if (typeof v !== "number" || !Number.isInteger(v)) throw invalid(`${name} must be an integer`);
    q[name] = String(v);
  }
  for (const name of LISTS) {
    const v = b[name];
    if (v === undefined || v === null) continue;
    if (typeof v === "string") q[name] = v;
    else if (Array.isArray(v) && v.every((x) => typeof x === "string")) q[name] = v.join(",");
    else throw invalid(`${name} must be an array of attribute names`);
  }
  return q;
}
