import type { Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { OrganizationService } from "../../directory/organizations/service.js";
import type { Organization } from "../../directory/organizations/types.js";
import { isUuid } from "../../platform/ids.js";
import { notFound } from "../errors.js";
import { isObject } from "../json.js";
import { pageOf, parsePageRequest } from "../paging.js";
import {
  CreateOrganizationBody,
  IdParams,
  OrganizationJson,
  PageOnlyQuery,
  UpdateOrganizationBody,
} from "../schemas/directory.js";
import { Empty, errors, pageSchema } from "../schemas/kit.js";

export const organizationJson = (o: Organization) => ({
  id: o.id,
  name: o.name,
  keys_follow_identity: o.keysFollowIdentity,
  create_time: o.createTime.toISOString(),
});

type ById = { Params: Static<typeof IdParams> };
const tags = ["Organizations"];
const one = { tags, params: IdParams, response: { 200: OrganizationJson, ...errors } };

export function registerOrganizationRoutes(
  scope: FastifyInstance,
  organizations: OrganizationService,
  onDeleted: (organizationId: string) => void,
): void {
  scope.post<{ Body: Static<typeof CreateOrganizationBody> }>(
    "/organizations",
    { schema: { tags, body: CreateOrganizationBody, response: { 201: OrganizationJson, ...errors } } },
    async (req, reply) => {
      const { name, keys_follow_identity: follow } = req.body;
      reply.code(201);
      return organizationJson(await organizations.create(name, follow ?? true));
    },
  );

  /** Fields present in the body change (`name`, `keys_follow_identity`); the others stay. */
  scope.patch<ById & { Body: Static<typeof UpdateOrganizationBody> }>(
    "/organizations/:id",
    { schema: { ...one, body: UpdateOrganizationBody } },
    async (req) => {
      const raw = req.body;
      const { name, keys_follow_identity: keysFollowIdentity } = isObject(raw.organization) ? raw.organization : raw;
      const org = isUuid(req.params.id)
        ? await organizations.update(req.params.id, {
            ...(name === undefined ? {} : { name }),
            ...(keysFollowIdentity === undefined || keysFollowIdentity === null ? {} : { keysFollowIdentity }),
          })
        : undefined;
      if (org === undefined) throw notFound(`organization ${req.params.id} does not exist`);
      return organizationJson(org);
    },
  );

  scope.get<{ Querystring: Static<typeof PageOnlyQuery> }>(
    "/organizations",
    { schema: pageSchema(tags, PageOnlyQuery, "organizations", OrganizationJson) },
    async (req) => {
      const page = parsePageRequest(req.query);
      const rows = await organizations.list(page.after, page.pageSize + 1);
      const { items, next_page_token } = pageOf(rows, page.pageSize, (o) => o.id);
      return { organizations: items.map(organizationJson), next_page_token };
    },
  );

  scope.get<ById>("/organizations/:id", { schema: one }, async (req) => {
    const org = isUuid(req.params.id) ? await organizations.get(req.params.id) : undefined;
    if (org === undefined) throw notFound(`organization ${req.params.id} does not exist`);
    return organizationJson(org);
  });

  /** Deleting an organization removes everything in it: clients, identities, groups (FK cascades). */
  scope.delete<ById>(
    "/organizations/:id",
    { schema: { tags, params: IdParams, response: { 200: Empty, ...errors } } },
    async (req) => {
      const deleted = isUuid(req.params.id) && (await organizations.delete(req.params.id));
      if (!deleted) throw notFound(`organization ${req.params.id} does not exist`);
      onDeleted(req.params.id);
      return {};
    },
  );
}
