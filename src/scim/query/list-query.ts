import type { FilterNode, SortSpec } from "../../directory/search/types.js";
import { ScimError } from "../errors.js";
import { DEFAULT_COUNT, MAX_COUNT, MAX_START_INDEX } from "../limits.js";
import { CORE_REGISTRY, type SchemaRegistry } from "../schema/registry.js";
import { type ExtensionFilterLookup, parseFilter, type ResourceKind } from "./filter.js";
import { parseSort } from "./sort.js";

export type Page =
  | { kind: "offset"; startIndex: number; count: number }
  | { kind: "cursor"; cursor: string; count: number };

export interface ListQuery {
  page: Page;
  filter?: FilterNode;
  filterText?: string;
  sort?: SortSpec;
  /** `sortBy` and `sortOrder` as sent, for the cursor's query digest. */
  sortText?: string;
  attributes?: string[];
  excludedAttributes?: string[];
}

export interface Projection {
  attributes?: string[];
  excludedAttributes?: string[];
}

/**
 * The query of GET /Users and GET /Groups (and the body of POST …/.search, turned into the same parameters).
 * `sortBy` pages by offset or by cursor; a sorted cursor carries the last row's sort value and is bound to the sort.
 */
export function parseListQuery(
  kind: ResourceKind,
  q: Record<string, unknown>,
  registry: SchemaRegistry = CORE_REGISTRY,
  extensions?: ExtensionFilterLookup,
): ListQuery {
  const count = clampedInteger(q, "count", DEFAULT_COUNT, 0, MAX_COUNT);
  const cursor = param(q, "cursor");
  const startIndexText = param(q, "startIndex");

  let page: Page;
  if (cursor !== undefined) {
    // RFC 9865 §2: an empty cursor asks for the first page.
    if (startIndexText !== undefined) {
      throw new ScimError(
        400,
        "invalidValue",
        "cursor and startIndex are mutually exclusive: use one pagination method",
      );
    }
    page = { kind: "cursor", cursor, count };
  } else {
    page = { kind: "offset", startIndex: clampedInteger(q, "startIndex", 1, 1, MAX_START_INDEX), count };
  }

  const query: ListQuery = { page, ...parseProjection(q) };
  const filterText = param(q, "filter");
  if (filterText !== undefined) {
    query.filter = parseFilter(kind, filterText, registry, extensions);
    query.filterText = filterText;
  }
  const sortBy = param(q, "sortBy");
  const sortOrder = param(q, "sortOrder");
  if (sortBy !== undefined && sortBy.trim() !== "") {
    query.sort = parseSort(kind, sortBy.trim(), sortOrder, registry);
    query.sortText = `${sortBy.trim()} ${sortOrder ?? ""}`;
  }
  return query;
}

/** RFC 7644 §3.4.2.5: comma-separated attribute lists; blank entries are dropped and a blank list counts as absent. */
export function parseProjection(q: Record<string, unknown>): Projection {
  const attributes = list(param(q, "attributes"));
  const excludedAttributes = list(param(q, "excludedAttributes"));
  if (attributes !== undefined && excludedAttributes !== undefined) {
    throw new ScimError(400, undefined, "attributes and excludedAttributes are mutually exclusive");
  }
  if (attributes !== undefined) return { attributes };
  if (excludedAttributes !== undefined) return { excludedAttributes };
  return {};
}

/** Fastify hands repeated parameters over as arrays; the first occurrence wins. */
function param(q: Record<string, unknown>, name: string): string | undefined {
  const raw: unknown = q[name];
  const value: unknown = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || typeof value === "string") return value;
  throw new ScimError(400, "invalidValue", `query parameter ${name} must be a string`);
}

function list(text: string | undefined): string[] | undefined {
  const items = (text ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  return items.length > 0 ? items : undefined;
}

/** Below the minimum clamps up (RFC 7644 §3.4.2.4); above the maximum is tooMany. */
function clampedInteger(q: Record<string, unknown>, name: string, fallback: number, min: number, max: number): number {
  const text = param(q, name);
  if (text === undefined) return fallback;
  if (!/^[+-]?\d+$/.test(text.trim())) {
    throw new ScimError(400, "invalidValue", `${name} must be an integer`);
  }
  const value = Number(text.trim());
  if (value > max) throw new ScimError(400, "tooMany", `${name} must be at most ${max}`);
  return Math.max(value, min);
}
