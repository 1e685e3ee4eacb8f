import type { ScimClient } from "../../directory/scim-clients/types.js";
import type { ReadView, StoredUser } from "../../directory/identities/types.js";
import type { ScimDeps } from "../deps.js";
import { listResponse, type PageRequest, pageRequestOf } from "../query/list-page.js";
import { type ListQuery, parseListQuery } from "../query/list-query.js";
import { includes, type Projection } from "../query/projection.js";
import { rawArray, stringifyWithRaw } from "../raw-json.js";
import { extensionLookup, registryOf } from "../schema/client-registry.js";
import { userRenderer } from "../users/render-text.js";

type Query = Record<string, unknown>;

export const projectionOf = (query: ListQuery): Projection => ({
  attributes: query.attributes,
  excludedAttributes: query.excludedAttributes,
});

export const parseUsersQuery = (client: ScimClient, q: Query): ListQuery =>
  parseListQuery("User", q, registryOf(client), extensionLookup(client.indexedAttributes));

/** The users of one page of `query` as rendered JSON texts, with the total of an offset page. */
export async function findUsers(
  deps: ScimDeps,
  client: ScimClient,
  baseUrl: string,
  query: ListQuery,
  request: PageRequest,
): Promise<{ rows: StoredUser[]; total?: number; render: (u: StoredUser) => string }> {
  const projection = projectionOf(query);
  const view: ReadView = { groups: includes("User", projection, "groups") };
  const spec = { filter: query.filter, sort: query.sort };
  const page = await deps.identities.queries.list(client.organizationId, spec, request, view);
  return { ...page, render: userRenderer(baseUrl, projection, registryOf(client)) };
}

/** GET /Users and POST /Users/.search: one ListResponse. */
export async function usersPage(deps: ScimDeps, client: ScimClient, baseUrl: string, q: Query): Promise<string> {
  const query = parseUsersQuery(client, q);
  const { request, context } = pageRequestOf("User", client.clientId, query, deps.cursors);
  const { render, ...page } = await findUsers(deps, client, baseUrl, query, request);
  return stringifyWithRaw(listResponse(query, page, render, deps.cursors, context, rawArray));
}
