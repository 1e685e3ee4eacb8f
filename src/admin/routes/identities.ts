import { MAX_IDENTIFIER_LENGTH } from "../limits.js";
import type { FastifyInstance } from "fastify";
import type { IdentityService } from "../../directory/identities/service.js";
import type { Identity } from "../../directory/identities/types.js";
import { isUuid } from "../../platform/ids.js";
import { AdminError, notFound } from "../errors.js";
import { first, pageOf, parsePageRequest, requireUuid } from "../paging.js";
import { requireObject, requireString } from "../validate.js";

/** The admin view of an identity (DESIGN.md): snake_case, never the password hash. */
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

/** Issue 3 point 6: list and read identities, and check a password for our own application's login. */
export function registerIdentityRoutes(scope: FastifyInstance, identities: IdentityService): void {
  scope.get("/identities", async (req) => {
    const query = req.query as Record<string, unknown>;
    const page = parsePageRequest(query);
    const org = first(query.organization_id);
    const orgId = org === undefined || org === "" ? undefined : requireUuid(org, "organization_id");
    const after = page.after === undefined ? undefined : requireUuid(page.after, "page_token");
    const rows = await identities.listIdentities(orgId, after, page.pageSize + 1);
    const { items, next_page_token } = pageOf(rows, page.pageSize, (i) => i.id);
    return { identities: items.map(identityJson), next_page_token };
  });

  scope.get<{ Params: { id: string } }>("/identities/:id", async (req) => {
    const identity = isUuid(req.params.id) ? await identities.getIdentity(req.params.id.toLowerCase()) : undefined;
    if (identity === undefined) throw notFound(`identity ${req.params.id} does not exist`);
    return identityJson(identity);
  });

  scope.post("/identities::verifyPassword", async (req) => {
    const body = requireObject(req.body);
    const identifier = requireString(body, "identifier", MAX_IDENTIFIER_LENGTH);
    const password = typeof body.password === "string" ? body.password : "";
    const result = await identities.verifyPassword(identifier, password);
    if (result.ok) return { identity: identityJson(result.identity) };
    // Spec 3: an inactive user cannot log in; the 403 is given only to the right password.
    if (result.reason === "inactive") throw new AdminError("PERMISSION_DENIED", "the identity is inactive");
    throw new AdminError("UNAUTHENTICATED", "the identifier or the password is wrong");
  });
}
