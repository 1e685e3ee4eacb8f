import type { Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { IdentityService } from "../../directory/identities/service.js";
import type { Identity } from "../../directory/identities/types.js";
import { isUuid } from "../../platform/ids.js";
import { AdminError, notFound } from "../errors.js";
import { pageOf, parseOrgPageRequest, requireUuid } from "../paging.js";
import { IdentityJson, IdParams, ListIdentitiesQuery, VerifyPasswordBody } from "../schemas/directory.js";
import { errors, pageSchema } from "../schemas/kit.js";
import { Type } from "@sinclair/typebox";

/** The admin view of an identity: snake_case, never the password hash. */
export const identityJson = (i: Identity) => ({
  id: i.id,
  organization_id: i.organizationId,
  state: i.active ? "active" : "inactive",
  user_name: i.userName,
  traits: i.traits,
  scim: i.scim,
  has_password: i.hasPassword,
  create_time: i.createdAt.toISOString(),
  update_time: i.updatedAt.toISOString(),
});

const tags = ["Identities"];

/** List and read identities, and check a password for our own application's login. */
export function registerIdentityRoutes(scope: FastifyInstance, identities: IdentityService): void {
  scope.get<{ Querystring: Static<typeof ListIdentitiesQuery> }>(
    "/identities",
    { schema: pageSchema(tags, ListIdentitiesQuery, "identities", IdentityJson) },
    async (req) => {
      const page = parseOrgPageRequest(req.query);
      const after = page.after === undefined ? undefined : requireUuid(page.after, "page_token");
      const rows = await identities.listIdentities(page.orgId, after, page.pageSize + 1);
      const { items, next_page_token } = pageOf(rows, page.pageSize, (i) => i.id);
      return { identities: items.map(identityJson), next_page_token };
    },
  );

  scope.get<{ Params: Static<typeof IdParams> }>(
    "/identities/:id",
    { schema: { tags, params: IdParams, response: { 200: IdentityJson, ...errors } } },
    async (req) => {
      const identity = isUuid(req.params.id) ? await identities.getIdentity(req.params.id.toLowerCase()) : undefined;
      if (identity === undefined) throw notFound(`identity ${req.params.id} does not exist`);
      return identityJson(identity);
    },
  );

  scope.post<{ Body: Static<typeof VerifyPasswordBody> }>(
    "/identities::verifyPassword",
    {
      schema: {
        tags,
        body: VerifyPasswordBody,
        response: { 200: Type.Object({ identity: IdentityJson }), ...errors },
      },
    },
    async (req) => {
      const { identifier, password } = req.body;
      const result = await identities.verifyPassword(identifier, typeof password === "string" ? password : "");
      if (result.ok) return { identity: identityJson(result.identity) };
      // An inactive user cannot log in; the 403 is given only to the right password.
      if (result.reason === "inactive") throw new AdminError("PERMISSION_DENIED", "the identity is inactive");
      throw new AdminError("UNAUTHENTICATED", "the identifier or the password is wrong");
    },
  );
}
