import type { FastifyInstance } from "fastify";
import type { GroupService } from "../directory/groups/service.js";
import type { IdentityService } from "../directory/identities/service.js";
import type { Clock } from "../platform/clock.js";
import type { Logger } from "../platform/logger.js";
import { installScimObservability, type Observability } from "../observability/index.js";
import type { Db } from "../storage/database.js";
import type { CursorCodec } from "./query/cursor.js";
import { registerDiscoveryRoutes } from "./discovery.js";
import { registerGroupRoutes } from "./groups/routes.js";
import { installScimPlumbing, type ScimClientLookup } from "./plugin.js";
import { registerUserRoutes } from "./users/routes.js";

export const SCIM_PREFIX = "/scim/:clientId/v2";

export interface ScimDeps {
  readonly clients: ScimClientLookup;
  readonly publicUrl: () => string;
  readonly logger: Logger;
  readonly db: Db;
  readonly clock: Clock;
  readonly cursors: CursorCodec;
  /** The domain services: built once in app.ts and shared with the admin API (one mapping cache). */
  readonly identities: IdentityService;
  readonly groups: GroupService;
  /** Metrics, log lines and the request log of every SCIM request. */
  readonly observability: Observability;
}

/** The SCIM 2.0 protocol adapter: one encapsulated scope per the base URL `/scim/{client_id}/v2`. */
export async function registerScim(app: FastifyInstance, deps: ScimDeps): Promise<void> {
  await app.register(
    async (scope) => {
      installScimPlumbing(scope, deps.clients, deps.logger);
      installScimObservability(scope, { ...deps.observability, ...deps });
      const baseUrlOf = (clientId: string) => `${deps.publicUrl()}/scim/${encodeURIComponent(clientId)}/v2`;
      registerDiscoveryRoutes(scope, baseUrlOf);
      registerUserRoutes(scope, deps);
      registerGroupRoutes(scope, deps);
    },
    { prefix: SCIM_PREFIX },
  );
}
