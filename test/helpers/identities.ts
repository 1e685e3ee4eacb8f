import { hourOf } from "../../src/directory/identities/repo.js";
import { uuidv7 } from "../../src/platform/ids.js";
import type { Db } from "../../src/storage/database.js";
import { USER_SCHEMA } from "./constants.js";

/** The identities row and userName identifier the Users API would store for this user. */
function rowsOf(orgId: string, id: string, userName: string, scim: Record<string, unknown>, now: Date) {
  return {
    identity: {
      id,
      organization_id: orgId,
      active: true,
      user_name: userName,
      external_id: null,
      employee_number: null,
      scim: JSON.stringify({ schemas: [USER_SCHEMA], userName, active: true, ...scim }),
      traits: "{}",
      password_hash: null,
      created_at: now,
      updated_at: now,
      modified_hour: hourOf(now),
    },
    identifier: { value: userName.toLowerCase(), identity_id: id, organization_id: orgId, kind: "userName" as const },
  };
}

/**
 * An identity as the Users API stores it (identities.scim = the SCIM user as written, without id/meta/groups), for
 * group tests that must not depend on POST /Users.
 */
export async function insertIdentity(
  db: Db,
  orgId: string,
  userName: string,
  scim: Record<string, unknown> = {},
): Promise<string> {
  const id = uuidv7();
  const rows = rowsOf(orgId, id, userName, scim, new Date());
  await db.insertInto("identities").values(rows.identity).execute();
  await db.insertInto("identity_identifiers").values(rows.identifier).execute();
  return id;
}

/** Many identities in one statement per 5 000 (userName `${prefix}-${n}`), for scale tests and benchmarks. */
export async function insertIdentities(db: Db, orgId: string, prefix: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => uuidv7());
  for (let i = 0; i < ids.length; i += 5000) {
    const now = new Date();
    const rows = ids.slice(i, i + 5000).map((id, n) => rowsOf(orgId, id, `${prefix}-${i + n}`, {}, now));
    await db
      .insertInto("identities")
      .values(rows.map((r) => r.identity))
      .execute();
    await db
      .insertInto("identity_identifiers")
      .values(rows.map((r) => r.identifier))
      .execute();
  }
  return ids;
}
