import { sql } from "kysely";
import type { Db } from "../../storage/database.js";

/** The sealed secret of a deleted connection's endpoint while it owes deliveries (0031-retired-webhooks). */
export interface RetiredSealedSecret {
  readonly clientId: string;
  readonly lastSeq: number;
  readonly sealed: string;
}

/** The endpoints of deleted connections, as the ROSTER_SECRETS rotation reads and re-seals them. */
export class RetiredWebhookRepo {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  /** Every retired secret not sealed with `currentPrefix`: they are few, and live only until delivered. */
  async sealedOtherwise(currentPrefix: string): Promise<RetiredSealedSecret[]> {
    const rows = await this.#db
      .selectFrom("retired_webhooks")
      .select(["client_id", "last_seq", "webhook_secret_sealed"])
      .where("webhook_secret_sealed", "is not", null)
      .where(sql<boolean>`webhook_secret_sealed not like ${`${currentPrefix}%`}`)
      .orderBy("client_id")
      .orderBy("last_seq")
      .execute();
    return rows.flatMap((r) =>
      r.webhook_secret_sealed === null
        ? []
        : [{ clientId: r.client_id, lastSeq: Number(r.last_seq), sealed: r.webhook_secret_sealed }],
    );
  }

  /** Replaces a sealed secret only if it still holds `was`. */
  async reseal(s: RetiredSealedSecret, sealed: string): Promise<boolean> {
    const r = await this.#db
      .updateTable("retired_webhooks")
      .set({ webhook_secret_sealed: sealed })
      .where("client_id", "=", s.clientId)
      .where("last_seq", "=", s.lastSeq)
      .where("webhook_secret_sealed", "=", s.sealed)
      .executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }
}
