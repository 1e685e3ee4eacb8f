import type { FastifyInstance } from "fastify";
import type { Logger } from "../platform/logger.js";
import { registerDiscoveryRoutes } from "./discovery.js";
import { installScimPlumbing, type ScimClientLookup } from "./plugin.js";

export const SCIM_PREFIX = "/scim/:clientId/v2";

export interface ScimDeps {
  readonly clients: ScimClientLookup;
  readonly publicUrl: () => string;
  readonly logger: Logger;
}

/** The SCIM 2.0 protocol adapter: one encapsulated scope per the base URL `/scim/{client_id}/v2`. */
export async function registerScim(app: FastifyInstance, deps: ScimDeps): Promise<void> {
  await app.register(
    async (scope) => {
      installScimPlumbing(scope, deps.clients, deps.logger);
      const baseUrlOf = (clientId: string) => `${deps.publicUrl()}/scim/${encodeURIComponent(clientId)}/v2`;
      registerDiscoveryRoutes(scope, baseUrlOf);
    },
    { prefix: SCIM_PREFIX },
  );
}
