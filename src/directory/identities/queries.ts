import type { Db } from "../../storage/database.js";
import { toRecord } from "./repo-columns.js";
import type { SearchSpec } from "../search/types.js";
import * as reads from "./repo-reads.js";
import { searchUsers } from "./repo-search.js";
import type { GroupRef, Identity, ReadView, StoredUser, UserPage, UserRecord } from "./types.js";

/** The reads of identities behind SCIM users (UserRecord), and of identities as the admin API shows them. */
export class IdentityQueries {
  readonly #db: Db;
  /** For GET and list: the pool with generic plans (storage/open.ts), or db. */
  readonly #reads: Db;

  constructor(db: Db, reads: Db = db) {
    this.#db = db;
    this.#reads = reads;
  }

  async record(orgId: string, id: string, view: ReadView): Promise<UserRecord | undefined> {
    const row = await reads.findUser(this.#reads, orgId, id, view.groups);
    return row === undefined ? undefined : toRecord(row);
  }

  /** One list page; a filter the store cannot answer throws UnsupportedFilterError. */
  async records(
    orgId: string,
    spec: SearchSpec,
    page: UserPage,
    view: ReadView,
  ): Promise<{ rows: UserRecord[]; total?: number; sortValues?: (string | null)[] }> {
    const { rows, ...rest } = await searchUsers(this.#reads, this.#db, orgId, spec, page, view.groups);
    return { rows: rows.map(toRecord), ...rest };
  }

  /** record, with the document and memberships parsed. */
  async get(orgId: string, id: string, view: ReadView): Promise<StoredUser | undefined> {
    const user = await this.record(orgId, id, view);
    return user === undefined ? undefined : storedUserOf(orgId, user);
  }

  /** records, with the documents and memberships parsed. */
  async list(
    orgId: string,
    spec: SearchSpec,
    page: UserPage,
    view: ReadView,
  ): Promise<{ rows: StoredUser[]; total?: number }> {
    const { rows, total } = await this.records(orgId, spec, page, view);
    const users = rows.map((u) => storedUserOf(orgId, u));
    return total === undefined ? { rows: users } : { rows: users, total };
  }

  /** Identities of one organization (or all), keyset-paged by id. */
  async listIdentities(orgId: string | undefined, after: string | undefined, limit: number): Promise<Identity[]> {
    return (await reads.listIdentities(this.#db, orgId, after, limit)).map(toIdentity);
  }

  async getIdentity(id: string): Promise<Identity | undefined> {
    const row = await reads.getIdentity(this.#db, id);
    return row === undefined ? undefined : toIdentity(row);
  }
}

/** A UserRecord with its document and memberships parsed. */
export function storedUserOf(orgId: string, user: UserRecord): StoredUser {
  const groups =
    user.groups === undefined
      ? undefined
      : (JSON.parse(user.groups) as { id: string; display: string }[]).map(
          (g): GroupRef => ({ value: g.id, display: g.display }),
        );
  return {
    id: user.id,
    organizationId: orgId,
    scim: JSON.parse(user.document) as StoredUser["scim"],
    createdAt: new Date(user.createdAt),
    updatedAt: new Date(user.updatedAt),
    groups,
    managerDisplayName: user.managerDisplayName,
  };
}

export function toIdentity(row: reads.IdentityRow): Identity {
  return {
    id: row.id,
    organizationId: row.organization_id,
    active: row.active,
    userName: row.user_name,
    traits: row.traits,
    scim: row.scim,
    hasPassword: row.has_password,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
