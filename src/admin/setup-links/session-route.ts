import type { FastifyInstance } from "fastify";
import type { OrganizationService } from "../../directory/organizations/service.js";
import type { SetupLinkService } from "../../directory/setup-links/service.js";
import { notFound } from "../errors.js";
import { errors } from "../schemas/kit.js";
import { MAX_SETUP_CONNECTIONS } from "./guard.js";
import { SetupSessionJson } from "./schemas.js";
import type { SetupSessionCodec } from "./session.js";

export interface SetupSessionRouteDeps {
  readonly setupLinks: SetupLinkService;
  readonly sessions: SetupSessionCodec;
  readonly organizations: OrganizationService;
}

/** `GET /setupSession`: what the setup view shows and needs (its organization, its end, its CSRF token). */
export function registerSetupSessionRoute(scope: FastifyInstance, deps: SetupSessionRouteDeps): void {
  scope.get(
    "/setupSession",
    { schema: { tags: ["Setup links"], response: { 200: SetupSessionJson, ...errors } } },
    async (req) => {
      const principal = req.adminPrincipal;
      if (principal?.kind !== "setup") throw notFound("no setup session: this request carries an admin token");
      const link = await deps.setupLinks.live(principal.linkId);
      const org = await deps.organizations.get(principal.organizationId);
      if (link === undefined || org === undefined) throw notFound("the setup session's link or organization is gone");
      return {
        organization_id: org.id,
        organization_name: org.name,
        link_id: link.id,
        expire_time: link.expireTime.toISOString(),
        return_url: link.returnUrl,
        csrf_token: deps.sessions.csrfOf(principal.cookie),
        max_connections: MAX_SETUP_CONNECTIONS,
      };
    },
  );
}
