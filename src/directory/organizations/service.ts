import type { Clock } from "../../platform/clock.js";
import { uuidv7 } from "../../platform/ids.js";
import type { OrganizationRepo } from "./repo.js";
import type { Organization, OrganizationChanges } from "./types.js";

/**
 * Organizations are the tenants; deleting one removes everything in it. A missing organization is `undefined`
 * (or `false` for delete): there is no other way an organization operation fails.
 */
export class OrganizationService {
  constructor(
    private readonly repo: OrganizationRepo,
    private readonly clock: Clock,
  ) {}

  create(name: string, keysFollowIdentity = true): Promise<Organization> {
    const now = this.clock.now();
    return this.repo.insert({ id: uuidv7(now.getTime()), name, keysFollowIdentity, createTime: now });
  }

  get(id: string): Promise<Organization | undefined> {
    return this.repo.get(id);
  }

  /** Keyset page ordered by id; `limit` rows at most. */
  list(after: string | undefined, limit: number): Promise<Organization[]> {
    return this.repo.list(after, limit);
  }

  update(id: string, changes: OrganizationChanges): Promise<Organization | undefined> {
    if (changes.name === undefined && changes.keysFollowIdentity === undefined) return this.get(id);
    return this.repo.update(id, changes);
  }

  delete(id: string): Promise<boolean> {
    return this.repo.delete(id);
  }
}
