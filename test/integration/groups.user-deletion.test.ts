import { describe, expect, it } from "vitest";
import { createGroup, memberIds } from "../helpers/groups.js";
import { insertIdentity } from "../helpers/identities.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * Deleting a user deletes the identity, and with it every membership (FK cascade). DELETE /Users is built on
 * another branch; here the identity row is deleted the way that endpoint does.
 */
const { t, c } = useTestApp({ seed: true });

describe("user deletion", () => {
  it("removes the user from every group it was a direct member of, leaving the others", async () => {
    const gone = await insertIdentity(t.db, c.organizationId, "leaving@example.com");
    const stays = await insertIdentity(t.db, c.organizationId, "staying@example.com");
    const a = await createGroup(t, c, "A", { members: [{ value: gone }, { value: stays }] });
    const b = await createGroup(t, c, "B", { members: [{ value: gone }] });
    expect(await memberIds(t, c, b.id)).toEqual([gone]);

    await t.db.deleteFrom("identities").where("id", "=", gone).execute();

    expect(await memberIds(t, c, a.id)).toEqual([stays]);
    expect(await memberIds(t, c, b.id)).toEqual([]);
  });
});
