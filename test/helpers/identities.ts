import { uuidv7 } from "../../src/platform/ids.js";
import type { Db } from "../../src/storage/database.js";

const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";

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
  const now = new Date();
  await db
    .insertInto("identities")
    .values({
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
    })
    .execute();
  await db
    .insertInto("identity_identifiers")
    .values({ value: userName.toLowerCase(), identity_id: id, organization_id: orgId, kind: "userName" })
    .execute();
  return id;
}

/** Many identities in one statement (userName `${prefix}-${n}`), for scale tests and benchmarks. */
export async function insertIdentities(db: Db, orgId: string, prefix: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => uuidv7());
  const rows = ids.map((id, n) => ({ id, userName: `${prefix}-${n}` }));
  for (let i = 0; i < rows.length; i += 5000) {
    const chunk = rows.slice(i, i + 5000);
    const now = new Date();
    await db
      .insertInto("identities")
      .values(
        chunk.map((r) => ({
          id: r.id,
          organization_id: orgId,
          active: true,
          user_name: r.userName,
          external_id: null,
          employee_number: null,
          scim: JSON.stringify({ schemas: [USER_SCHEMA], userName: r.userName, active: true }),
          traits: "{}",
          password_hash: null,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
    await db
      .insertInto("identity_identifiers")
      .values(
        chunk.map((r) => ({
          value: r.userName.toLowerCase(),
          identity_id: r.id,
          organization_id: orgId,
          kind: "userName" as const,
        })),
      )
      .execute();
  }
  return ids;
}
