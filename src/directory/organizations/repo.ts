import type { Selectable } from "kysely";
import type { Db } from "../../storage/database.js";
import type { OrganizationsTable } from "../../storage/schema.js";
import type { Organization, OrganizationChanges } from "./types.js";

/** The storage of organizations (Kysely only); deleting one cascades to everything in it (foreign keys). */
export class OrganizationRepo {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  async insert(organization: Organization): Promise<Organization> {
    const row = await this.#db
      .insertInto("organizations")
      .values({
        id: organization.id,
        name: organization.name,
        keys_follow_identity: organization.keysFollowIdentity,
        create_time: organization.createTime,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toOrganization(row);
  }

  async get(id: string): Promise<Organization | undefined> {
    const row = await this.#db.selectFrom("organizations").selectAll().where("id", "=", id).executeTakeFirst();
    return row === undefined ? undefined : toOrganization(row);
  }

  /** Keyset page ordered by id; `limit` rows at most. */
  async list(after: string | undefined, limit: number): Promise<Organization[]> {
    let q = this.#db.selectFrom("organizations").selectAll().orderBy("id").limit(limit);
    if (after !== undefined) q = q.where("id", ">", after);
    return (await q.execute()).map(toOrganization);
  }

  /** At least one change is given (an empty update is a read: the service's job). */
  async update(id: string, changes: OrganizationChanges): Promise<Organization | undefined> {
    const row = await this.#db
      .updateTable("organizations")
      .set({
        ...(changes.name === undefined ? {} : { name: changes.name }),
        ...(changes.keysFollowIdentity === undefined ? {} : { keys_follow_identity: changes.keysFollowIdentity }),
      })
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirst();
    return row === undefined ? undefined : toOrganization(row);
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.#db.deleteFrom("organizations").where("id", "=", id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}

const toOrganization = (row: Selectable<OrganizationsTable>): Organization => ({
  id: row.id,
  name: row.name,
  keysFollowIdentity: row.keys_follow_identity,
  createTime: row.create_time,
});
