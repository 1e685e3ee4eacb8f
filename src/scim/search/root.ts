import type { FastifyInstance } from "fastify";
import type { ScimDeps } from "../deps.js";
import { ScimError } from "../errors.js";
import type { ListQuery } from "../query/list-query.js";
import { refuseOtherMethods } from "../plugin.js";
import { RawJson, stringifyWithRaw } from "../raw-json.js";
import { LIST_RESPONSE_SCHEMA } from "../render.js";
import { searchQueryOf } from "./body.js";
import { findGroups, parseGroupsQuery } from "./groups.js";
import { findUsers, parseUsersQuery } from "./users.js";

/** A query for one resource type, or the error that says why the filter cannot apply to it. */
function attempt(parse: () => ListQuery): ListQuery | ScimError {
  try {
    return parse();
  } catch (e) {
    if (e instanceof ScimError && e.scimType === "invalidFilter") return e;
    throw e;
  }
}

/**
 * POST /.search (RFC 7644 §3.4.3): Users then Groups, as one offset-paged list. A filter that names an attribute
 * one type lacks (userName) matches none of that type; a filter neither type accepts is invalidFilter. Cursors
 * page one resource type at a time, so they are offered on /Users/.search and /Groups/.search only.
 */
export function registerRootSearch(scope: FastifyInstance, deps: ScimDeps): void {
  scope.post("/.search", async (req, reply) => {
    const q = searchQueryOf(req.body);
    if (q.cursor !== undefined) {
      throw new ScimError(
        400,
        "invalidValue",
        "cursor pagination is not offered on /.search: use startIndex and count, or /Users/.search and /Groups/.search",
      );
    }
    const client = req.scimClient;
    const users = attempt(() => parseUsersQuery(client, q));
    const groups = attempt(() => parseGroupsQuery(client, q));
    if (users instanceof ScimError && groups instanceof ScimError) throw users;
    const base = `${deps.publicUrl()}/scim/${encodeURIComponent(client.clientId)}/v2`;
    const page = ((users instanceof ScimError ? groups : users) as ListQuery).page;
    if (page.kind !== "offset") throw new Error("a search without cursor pages by offset");
    const offset = page.startIndex - 1;

    const resources: unknown[] = [];
    let total = 0;
    if (!(users instanceof ScimError)) {
      const found = await findUsers(deps, client, base, users, { kind: "offset", offset, limit: page.count });
      resources.push(...found.rows.map((u) => new RawJson(found.render(u))));
      total += found.total ?? 0;
    }
    if (!(groups instanceof ScimError)) {
      const limit = page.count - resources.length;
      const request = { kind: "offset" as const, offset: Math.max(0, offset - total), limit };
      const found = await findGroups(deps, client, base, { ...groups, page: { ...page, count: limit } }, request);
      resources.push(...found.rows.map((g) => found.rendered.get(g.id)));
      total += found.total ?? 0;
    }
    const body = {
      schemas: [LIST_RESPONSE_SCHEMA],
      totalResults: total,
      startIndex: page.startIndex,
      itemsPerPage: resources.length,
      ...(page.count === 0 ? {} : { Resources: resources }),
    };
    return reply.send(stringifyWithRaw(body));
  });
  refuseOtherMethods(scope, "/.search", ["POST"]);
}
