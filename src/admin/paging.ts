import { isUuid } from "../platform/ids.js";
import { invalidArgument, notFound } from "./errors.js";

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;
/**
 * A list page whose items can be large (SCIM clients with declarations and mappings) also stops at about this many
 * bytes, past its first item; next_page_token continues right after its last item.
 */
export const MAX_PAGE_BYTES = 4 * 1024 * 1024;

export interface PageRequest {
  readonly pageSize: number;
  /** Keyset position: list items whose key sorts after this one. */
  readonly after: string | undefined;
}

/** AIP-158: `page_size` (default 50, capped at 1000) and an opaque `page_token`. */
export function parsePageRequest(query: Record<string, unknown>): PageRequest {
  const rawSize = first(query.page_size);
  let pageSize = DEFAULT_PAGE_SIZE;
  if (rawSize !== undefined && rawSize !== "") {
    if (!/^\d+$/.test(rawSize)) throw invalidArgument("page_size must be a non-negative integer");
    pageSize = Math.min(Number(rawSize), MAX_PAGE_SIZE) || DEFAULT_PAGE_SIZE;
  }
  const token = first(query.page_token);
  if (token === undefined || token === "") return { pageSize, after: undefined };
  return { pageSize, after: decodePageToken(token) };
}

export const encodePageToken = (key: string): string => Buffer.from(`k:${key}`, "utf8").toString("base64url");

function decodePageToken(token: string): string {
  const decoded = Buffer.from(token, "base64url").toString("utf8");
  if (!decoded.startsWith("k:") || decoded.length < 3) throw invalidArgument("page_token is invalid");
  return decoded.slice(2);
}

export function first(v: unknown): string | undefined {
  if (Array.isArray(v)) return typeof v[0] === "string" ? v[0] : undefined;
  return typeof v === "string" ? v : undefined;
}

/** Fetch pageSize + 1 rows; the extra one tells whether a next page exists. */
export function pageOf<T>(
  rows: T[],
  pageSize: number,
  keyOf: (row: T) => string,
): { items: T[]; next_page_token: string } {
  if (rows.length <= pageSize) return { items: rows, next_page_token: "" };
  const items = rows.slice(0, pageSize);
  const last = items[items.length - 1];
  return { items, next_page_token: last === undefined ? "" : encodePageToken(keyOf(last)) };
}

export const requireUuid = (value: string, what: string): string => {
  if (!isUuid(value)) throw invalidArgument(`${what} must be a UUID`);
  return value.toLowerCase();
};

/** An id in a path: a malformed one names nothing, so it is a 404 like any other missing `what`. */
export const pathUuid = (raw: string, what: string): string => {
  if (!isUuid(raw)) throw notFound(`${what} ${raw} does not exist`);
  return raw.toLowerCase();
};

/** An optional UUID query parameter: absent or empty means "any". */
export const optionalUuid = (value: string | undefined, what: string): string | undefined =>
  value === undefined || value === "" ? undefined : requireUuid(value, what);

/** A list page narrowed to one organization by `organization_id` (absent or empty: every organization). */
export function parseOrgPageRequest(
  query: Record<string, unknown> & { organization_id?: string },
): PageRequest & { readonly orgId: string | undefined } {
  const page = parsePageRequest(query);
  return { ...page, orgId: optionalUuid(query.organization_id, "organization_id") };
}
