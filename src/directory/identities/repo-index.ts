import type { Transaction } from "kysely";
import type { Db } from "../../storage/database.js";
import type { Database } from "../../storage/schema.js";
import type { Identifier } from "./document.js";

/** The identifier index (userName and emails, unique across the service, case-insensitively). */

export async function insertIdentifiers(
  trx: Transaction<Database>,
  orgId: string,
  identityId: string,
  identifiers: readonly Identifier[],
): Promise<void> {
  if (identifiers.length === 0) return;
  await trx
    .insertInto("identity_identifiers")
    .values(identifiers.map((x) => ({ ...x, identity_id: identityId, organization_id: orgId })))
    .execute();
}

export async function deleteIdentifiers(
  trx: Transaction<Database>,
  identityId: string,
  values: readonly string[],
): Promise<void> {
  if (values.length === 0) return;
  await trx
    .deleteFrom("identity_identifiers")
    .where("identity_id", "=", identityId)
    .where("value", "in", values)
    .execute();
}

export interface IdentifierOwner {
  value: string;
  identity_id: string;
  organization_id: string;
}

/** Who holds these identifiers now (after a unique violation, to say where the clash is). */
export async function identifierOwners(db: Db, values: readonly string[]): Promise<IdentifierOwner[]> {
  if (values.length === 0) return [];
  return db
    .selectFrom("identity_identifiers")
    .select(["value", "identity_id", "organization_id"])
    .where("value", "in", values)
    .execute();
}
