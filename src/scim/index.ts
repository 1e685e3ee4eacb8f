import type { FastifyInstance } from "fastify";
import { installScimObservability } from "../observability/index.js";
import { registerTokenEndpoint } from "./auth/token-route.js";
import type { ScimDeps } from "./deps.js";
import { registerDiscoveryRoutes } from "./discovery.js";
import { registerGroupRoutes } from "./groups/routes.js";
import { installScimPlumbing } from "./plugin.js";
import { SCIM_REDACTOR } from "./redact.js";
import { registerRootSearch } from "./search/root.js";
import { registerUserRoutes } from "./users/routes.js";

export const SCIM_PREFIX = "/scim/:clientId/v2";

/** The SCIM 2.0 protocol adapter: one encapsulated scope per the base URL `/scim/{client_id}/v2`. */
export async function registerScim(app: FastifyInstance, deps: ScimDeps): Promise<void> {
  await app.register(
    async (scope) => {
      installScimPlumbing(scope, deps.clients, deps.logger, deps.faults, deps.tokens);
      installScimObservability(scope, { ...deps.observability, ...deps, redactor: SCIM_REDACTOR });
      const baseUrlOf = (clientId: string) => `${deps.publicUrl()}/scim/${encodeURIComponent(clientId)}/v2`;
      registerDiscoveryRoutes(scope, baseUrlOf);
      registerUserRoutes(scope, deps);
      registerGroupRoutes(scope, deps);
      registerRootSearch(scope, deps);
    },
    { prefix: SCIM_PREFIX },
  );
  await registerTokenEndpoint(app, deps, SCIM_PREFIX);
}
