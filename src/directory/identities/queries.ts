import type { SearchSpec } from "../search/types.js";
import type { IdentityStore } from "./repo-store.js";
import type { Identity, ReadView, StoredUser, UserPage } from "./types.js";

/** The reads of identities behind SCIM users (StoredUser), and of identities as the admin API shows them. */
export class IdentityQueries {
  readonly #store: IdentityStore;

  constructor(store: IdentityStore) {
    this.#store = store;
  }

  get(orgId: string, id: string, view: ReadView): Promise<StoredUser | undefined> {
    return this.#store.find(orgId, id, view.groups);
  }

  /** One list page; a filter the store cannot answer throws UnsupportedFilterError. */
  list(
    orgId: string,
    spec: SearchSpec,
    page: UserPage,
    view: ReadView,
  ): Promise<{ rows: StoredUser[]; total?: number; sortValues?: (string | null)[] }> {
    return this.#store.search(orgId, spec, page, view.groups);
  }

  /** Identities of one organization (or all), keyset-paged by id. */
  listIdentities(orgId: string | undefined, after: string | undefined, limit: number): Promise<Identity[]> {
    return this.#store.listIdentities(orgId, after, limit);
  }

  getIdentity(id: string): Promise<Identity | undefined> {
    return this.#store.getIdentity(id);
  }
}
