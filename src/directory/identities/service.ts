import type { Clock } from "../../platform/clock.js";
import type { EventSink } from "../events.js";
import type { DataMapper } from "../mapping/mapper.js";
import { IdentityCommands, type VerifyResult } from "./commands.js";
import { DocumentCache } from "./document-cache.js";
import { IdentityQueries } from "./queries.js";
import type { IdentityStore } from "./repo-store.js";
import type { SearchSpec } from "../search/types.js";
import type { Identity, ReadView, StoredUser, UserPage } from "./types.js";

export type { VerifyResult } from "./commands.js";

/**
 * Identities behind SCIM users: the writes (commands) and the reads (queries) over one store, built once by the
 * composition root and shared by the protocols.
 */
export class IdentityService {
  readonly commands: IdentityCommands;
  readonly queries: IdentityQueries;

  constructor(store: IdentityStore, clock: Clock, events: EventSink, mapper: DataMapper, cache = new DocumentCache()) {
    this.commands = new IdentityCommands(store, clock, events, mapper, cache);
    this.queries = new IdentityQueries(store);
  }

  // The admin API's entry points.

  get(orgId: string, id: string, view: ReadView): Promise<StoredUser | undefined> {
    return this.queries.get(orgId, id, view);
  }

  list(
    orgId: string,
    spec: SearchSpec,
    page: UserPage,
    view: ReadView,
  ): Promise<{ rows: StoredUser[]; total?: number }> {
    return this.queries.list(orgId, spec, page, view);
  }

  listIdentities(orgId: string | undefined, after: string | undefined, limit: number): Promise<Identity[]> {
    return this.queries.listIdentities(orgId, after, limit);
  }

  getIdentity(id: string): Promise<Identity | undefined> {
    return this.queries.getIdentity(id);
  }

  verifyPassword(identifier: string, password: string): Promise<VerifyResult> {
    return this.commands.verifyPassword(identifier, password);
  }
}
