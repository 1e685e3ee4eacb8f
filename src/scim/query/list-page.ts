import type { CursorPage, OffsetPage } from "../../directory/identities/types.js";
import { LIST_RESPONSE_SCHEMA } from "../render.js";
import { type CursorCodec, type CursorContext, invalidCursor, queryDigest } from "./cursor.js";
import type { ResourceKind } from "./filter.js";
import type { ListQuery } from "./list-query.js";

/**
 * What a repository must answer for one list page:
 * - offset: `total` (a count with the same filter) and the rows at OFFSET startIndex-1, in the sort (by id when
 *   there is none);
 * - cursor: the rows after the last one of the previous page, at most `count + 1` so the page knows whether another
 *   follows, never by OFFSET: unsorted, id > afterId in id order; sorted, after (afterValue, afterId) in the sort's
 *   order (ties by id), with each row's sort value (`sortValues`) for the next cursor.
 */
export type PageRequest = OffsetPage | CursorPage;

export interface PageRows<T> {
  readonly rows: readonly T[];
  /** Offset pages only. */
  readonly total?: number;
  /** Sorted cursor pages: each row's sort value as text (null when it has none), for the next cursor. */
  readonly sortValues?: readonly (string | null)[];
}

/** Turns a parsed ListQuery into the repository's page request; decodes (and so verifies) the cursor. */
export function pageRequestOf(
  kind: ResourceKind,
  clientId: string,
  query: ListQuery,
  codec: CursorCodec,
): { request: PageRequest; context: CursorContext } {
  const context: CursorContext = {
    clientId,
    resource: kind,
    queryDigest: queryDigest({
      filter: query.filterText,
      count: query.page.count,
      attributes: query.attributes?.join(","),
      excludedAttributes: query.excludedAttributes?.join(","),
      sort: query.sortText,
    }),
  };
  if (query.page.kind === "offset") {
    return {
      request: { kind: "offset", offset: query.page.startIndex - 1, limit: query.page.count },
      context,
    };
  }
  const limit = query.page.count + 1;
  if (query.page.cursor === "") return { request: { kind: "cursor", afterId: undefined, limit }, context };
  const { lastId, sortValue } = codec.decode(context, query.page.cursor);
  if (query.sort === undefined) return { request: { kind: "cursor", afterId: lastId, limit }, context };
  // The digest binds the cursor to its sort, so only a token made for this sort reaches here; one without a value
  // was not made by a sorted page.
  if (sortValue === undefined) throw invalidCursor();
  return { request: { kind: "cursor", afterId: lastId, afterValue: sortValue, limit }, context };
}

/**
 * The ListResponse body. `Resources` is present, possibly empty, except when count=0 (docs/decisions.md);
 * offset pages carry totalResults and startIndex, cursor pages carry nextCursor except on the last page.
 */
export function listResponse<T extends { id: string }, R = unknown>(
  query: ListQuery,
  page: PageRows<T>,
  render: (row: T) => R,
  codec: CursorCodec,
  context: CursorContext,
  /** What `Resources` holds, given the rendered rows (default: them, as an array). */
  collect: (rendered: R[]) => unknown = (rendered) => rendered,
): Record<string, unknown> {
  if (query.page.kind === "offset") {
    const resources = page.rows.map(render);
    return {
      schemas: [LIST_RESPONSE_SCHEMA],
      totalResults: page.total ?? resources.length,
      startIndex: query.page.startIndex,
      itemsPerPage: resources.length,
      ...(query.page.count === 0 ? {} : { Resources: collect(resources) }),
    };
  }
  const count = query.page.count;
  const rows = page.rows.slice(0, count);
  const last = rows[rows.length - 1];
  const more = page.rows.length > count && last !== undefined;
  // A sorted page's cursor carries its last row's sort value, an unsorted one only the id.
  const sortValue = query.sort === undefined ? undefined : (page.sortValues?.[rows.length - 1] ?? null);
  return {
    schemas: [LIST_RESPONSE_SCHEMA],
    itemsPerPage: rows.length,
    ...(more ? { nextCursor: codec.encode(context, last.id, sortValue) } : {}),
    ...(count === 0 ? {} : { Resources: collect(rows.map(render)) }),
  };
}
