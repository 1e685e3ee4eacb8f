import type { Insertable, Selectable } from "kysely";
import type { Db } from "../../storage/database.js";
import type { AdminAuditLogTable } from "../../storage/schema.js";

export type AuditRow = Selectable<AdminAuditLogTable>;
export type NewAuditRow = Insertable<AdminAuditLogTable>;

export class AuditRepo {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  async insert(row: NewAuditRow): Promise<void> {
    await this.#db.insertInto("admin_audit_log").values(row).execute();
  }

  /** Newest first: on the primary key (UUIDv7 ids) or, with a target, on (target, id desc). */
  async list(target: string | undefined, before: string | undefined, limit: number): Promise<AuditRow[]> {
    let q = this.#db.selectFrom("admin_audit_log").selectAll().orderBy("id", "desc").limit(limit);
    if (target !== undefined) q = q.where("target", "=", target);
    if (before !== undefined) q = q.where("id", "<", before);
    return q.execute();
  }
}
