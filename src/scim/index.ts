import type { FastifyInstance } from "fastify";
import { installScimObservability } from "../observability/index.js";
import type { ScimDeps } from "./deps.js";
import { registerDiscoveryRoutes } from "./discovery.js";
import { registerGroupRoutes } from "./groups/routes.js";
import { installScimPlumbing } from "./plugin.js";
import { registerRootSearch } from "./search/root.js";
import { registerUserRoutes } from "./users/routes.js";

export const SCIM_PREFIX = "/scim/:clientId/v2";

/** The SCIM 2.0 protocol adapter: one encapsulated scope per the base URL `/scim/{client_id}/v2`. */
export async function registerScim(app: FastifyInstance, deps: ScimDeps): Promise<void> {
  await app.register(
    async (scope) => {
      installScimPlumbing(scope, deps.clients, deps.logger, deps.faults);
      installScimObservability(scope, { ...deps.observability, ...deps });
      const baseUrlOf = (clientId: string) => `${deps.publicUrl()}/scim/${encodeURIComponent(clientId)}/v2`;
      registerDiscoveryRoutes(scope, baseUrlOf);
      registerUserRoutes(scope, deps);
      registerGroupRoutes(scope, deps);
      registerRootSearch(scope, deps);
    },
    { prefix: SCIM_PREFIX },
  );
}
