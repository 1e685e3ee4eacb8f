import type { Db } from "../../storage/database.js";
import { uuidv7 } from "../../platform/ids.js";
import type { Clock } from "../../platform/clock.js";

export interface Organization {
  readonly id: string;
  readonly name: string;
  readonly createTime: Date;
}

/** Organizations are the tenants; deleting one removes everything in it (FK cascades). */
export class OrganizationService {
  readonly #db: Db;
  readonly #clock: Clock;
  constructor(db: Db, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  async create(name: string): Promise<Organization> {
    const row = await this.#db
      .insertInto("organizations")
      .values({ id: uuidv7(this.#clock.now().getTime()), name, create_time: this.#clock.now() })
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

  async rename(id: string, name: string): Promise<Organization | undefined> {
    const row = await this.#db
      .updateTable("organizations")
      .set({ name })
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

const toOrganization = (row: { id: string; name: string; create_time: Date }): Organization => ({
  id: row.id,
  name: row.name,
  createTime: row.create_time,
});
