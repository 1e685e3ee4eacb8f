import { groupIndexedAttributes } from "../../directory/groups/extension-index-repo.js";
import type { Group, Member } from "../../directory/groups/types.js";
import type { ScimClient } from "../../directory/scim-clients/types.js";
import type { ScimDeps } from "../deps.js";
import { memberList } from "../groups/members.js";
import { memberFieldsOf, renderGroup } from "../groups/serialize.js";
import { listResponse, type PageRequest, pageRequestOf } from "../query/list-page.js";
import { type ListQuery, parseListQuery } from "../query/list-query.js";
import { stringifyWithRaw } from "../raw-json.js";
import { extensionLookup, registryOf } from "../schema/client-registry.js";
import { projectionOf } from "./users.js";

type Query = Record<string, unknown>;

export const parseGroupsQuery = (client: ScimClient, q: Query): ListQuery =>
  parseListQuery("Group", q, registryOf(client), extensionLookup(groupIndexedAttributes(client)));

/** The groups of one page of `query`, rendered with their members read in one statement (when projected). */
export async function findGroups(
  deps: ScimDeps,
  client: ScimClient,
  baseUrl: string,
  query: ListQuery,
  request: PageRequest,
): Promise<{ rows: Group[]; total?: number; rendered: Map<string, unknown> }> {
  const orgId = client.organizationId;
  const spec = { filter: query.filter, sort: query.sort };
  const page = await deps.groups.list(orgId, spec, request);
  const shown = page.rows.slice(0, query.page.count);
  const projection = projectionOf(query);
  const fields = memberFieldsOf(projection);
  const ids = shown.map((g) => g.id);
  const members =
    fields === undefined || ids.length === 0 ? new Map<string, Member[]>() : await deps.groups.members(orgId, ids);
  const registry = registryOf(client);
  const rendered = new Map(
    shown.map((g) => [
      g.id,
      renderGroup(
        g,
        baseUrl,
        projection,
        fields === undefined ? undefined : memberList(members.get(g.id) ?? [], fields, baseUrl),
        registry,
      ),
    ]),
  );
  return { ...page, rendered };
}

/** GET /Groups and POST /Groups/.search: one ListResponse. */
export async function groupsPage(deps: ScimDeps, client: ScimClient, baseUrl: string, q: Query): Promise<string> {
  const query = parseGroupsQuery(client, q);
  const { request, context } = pageRequestOf("Group", client.clientId, query, deps.cursors);
  const { rendered, ...page } = await findGroups(deps, client, baseUrl, query, request);
  return stringifyWithRaw(listResponse(query, page, (g) => rendered.get(g.id), deps.cursors, context));
}
