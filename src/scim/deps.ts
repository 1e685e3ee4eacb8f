import type { GroupService } from "../directory/groups/service.js";
import type { IdentityService } from "../directory/identities/service.js";
import type { Observability } from "../observability/index.js";
import type { Clock } from "../platform/clock.js";
import type { DatabaseFaults } from "../platform/faults.js";
import type { Logger } from "../platform/logger.js";
import type { AccessTokenCodec } from "./auth/access-tokens.js";
import type { ScimClientLookup } from "./plugin.js";
import type { CursorCodec } from "./query/cursor.js";

/** What the SCIM protocol adapter is built from (its own module, so the route files and index.ts import no loop). */
export interface ScimDeps {
  readonly clients: ScimClientLookup;
  readonly publicUrl: () => string;
  readonly logger: Logger;
  /** The request log's timestamps. */
  readonly clock: Clock;
  readonly cursors: CursorCodec;
  /** Signs and verifies the OAuth 2.0 access tokens of the client-credentials grant. */
  readonly tokens: AccessTokenCodec;
  /** The domain services: built once in app.ts and shared with the admin API (one mapping cache). */
  readonly identities: IdentityService;
  readonly groups: GroupService;
  /** Metrics, log lines and the request log of every SCIM request. */
  readonly observability: Observability;
  /** Tells the database's faults apart (503, 400) from the protocol's own errors. */
  readonly faults: DatabaseFaults;
}
