import { MAX_ORGANIZATION_NAME_LENGTH } from "../limits.js";
import type { FastifyInstance } from "fastify";
import type { OrganizationService } from "../../directory/organizations/service.js";
import type { Organization } from "../../directory/organizations/types.js";
import { isUuid } from "../../platform/ids.js";
import { notFound } from "../errors.js";
import { pageOf, parsePageRequest } from "../paging.js";
import { isObject, optionalBoolean, requireObject, requireString } from "../validate.js";

export const organizationJson = (o: Organization) => ({
  id: o.id,
  name: o.name,
  keys_follow_identity: o.keysFollowIdentity,
  create_time: o.createTime.toISOString(),
});

export function registerOrganizationRoutes(
  scope: FastifyInstance,
  organizations: OrganizationService,
  onDeleted: (organizationId: string) => void,
): void {
  scope.post("/organizations", async (req, reply) => {
    const body = requireObject(req.body);
    const name = requireString(body, "name", MAX_ORGANIZATION_NAME_LENGTH);
    reply.code(201);
    return organizationJson(await organizations.create(name, optionalBoolean(body, "keys_follow_identity") ?? true));
  });

  /** Fields present in the body change (`name`, `keys_follow_identity`); the others stay. */
  scope.patch<{ Params: { id: string } }>("/organizations/:id", async (req) => {
    const raw = requireObject(req.body);
    const body = isObject(raw.organization) ? raw.organization : raw;
    const name = body.name === undefined ? undefined : requireString(body, "name", MAX_ORGANIZATION_NAME_LENGTH);
    const keysFollowIdentity = optionalBoolean(body, "keys_follow_identity");
    const org = isUuid(req.params.id)
      ? await organizations.update(req.params.id, {
          ...(name === undefined ? {} : { name }),
          ...(keysFollowIdentity === undefined ? {} : { keysFollowIdentity }),
        })
      : undefined;
    if (org === undefined) throw notFound(`organization ${req.params.id} does not exist`);
    return organizationJson(org);
  });

  scope.get("/organizations", async (req) => {
    const page = parsePageRequest(req.query as Record<string, unknown>);
    const rows = await organizations.list(page.after, page.pageSize + 1);
    const { items, next_page_token } = pageOf(rows, page.pageSize, (o) => o.id);
    return { organizations: items.map(organizationJson), next_page_token };
  });

  scope.get<{ Params: { id: string } }>("/organizations/:id", async (req) => {
    const org = isUuid(req.params.id) ? await organizations.get(req.params.id) : undefined;
    if (org === undefined) throw notFound(`organization ${req.params.id} does not exist`);
    return organizationJson(org);
  });

  /** Deleting an organization removes everything in it: clients, identities, groups (FK cascades). */
  scope.delete<{ Params: { id: string } }>("/organizations/:id", async (req) => {
    const deleted = isUuid(req.params.id) && (await organizations.delete(req.params.id));
    if (!deleted) throw notFound(`organization ${req.params.id} does not exist`);
    onDeleted(req.params.id);
    return {};
  });
}
