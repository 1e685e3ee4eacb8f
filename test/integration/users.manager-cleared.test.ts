import { sql } from "kysely";
import { beforeEach, describe, expect, it } from "vitest";
import { scim } from "../helpers/seed.js";
import { ENTERPRISE_SCHEMA, USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * Deleting a user clears `manager` on the users that named it, in the same transaction as the delete, each with a
 * user.updated event; a manager named by a value that is no user of the organization is left as it is.
 */
const { t, c } = useTestApp({ recording: true, seed: true });
beforeEach(async () => t.recorder.clear());

const create = async (userName: string, enterprise?: Record<string, unknown>) => {
  const body =
    enterprise === undefined
      ? { schemas: [USER_SCHEMA], userName }
      : { schemas: [USER_SCHEMA, ENTERPRISE_SCHEMA], userName, [ENTERPRISE_SCHEMA]: enterprise };
  const res = await scim(t, c, "POST", "/Users", body);
  if (res.statusCode !== 201) throw new Error(res.body);
  return res.json().id as string;
};
const get = async (id: string) => (await scim(t, c, "GET", `/Users/${id}`)).json();

describe("deleting a manager", () => {
  it("clears manager on its reports, keeps their other enterprise attributes, and records user.updated for each", async () => {
    const boss = await create("boss@example.com");
    const kept = await create("kept@example.com", { department: "R&D", manager: { value: boss } });
    const bare = await create("bare@example.com", { manager: { value: boss.toUpperCase() } });
    const other = await create("other@example.com");
    const unrelated = await create("unrelated@example.com", { manager: { value: other } });
    expect((await get(kept))[ENTERPRISE_SCHEMA].manager).toEqual({ value: boss, displayName: "boss@example.com" });
    const keptBefore = await get(kept);
    await t.recorder.clear();

    expect((await scim(t, c, "DELETE", `/Users/${boss}`)).statusCode).toBe(204);

    const keptAfter = await get(kept);
    expect(keptAfter[ENTERPRISE_SCHEMA]).toEqual({ department: "R&D" });
    expect(keptAfter.schemas).toEqual([USER_SCHEMA, ENTERPRISE_SCHEMA]);
    expect(keptAfter.meta.lastModified >= keptBefore.meta.lastModified).toBe(true);
    const bareAfter = await get(bare);
    expect(bareAfter).not.toHaveProperty([ENTERPRISE_SCHEMA]);
    expect(bareAfter.schemas).toEqual([USER_SCHEMA]);
    expect((await get(unrelated))[ENTERPRISE_SCHEMA].manager.value).toBe(other);

    const events = await t.recorder.events();
    expect(events.map((e) => [e.kind, e.resourceId])).toEqual([
      ["user.deleted", boss],
      ...[kept, bare].sort().map((id) => ["user.updated", id]),
    ]);
    const updated = events.find((e) => e.resourceId === kept);
    expect(JSON.stringify(updated?.data)).not.toContain(boss);
    expect(JSON.stringify(updated?.data)).toContain("R&D");
  });

  it("a later PATCH of a report starts from the cleared document (no stale copy is written back)", async () => {
    const boss = await create("boss2@example.com");
    const report = await create("report2@example.com", { manager: { value: boss }, department: "Ops" });
    await scim(t, c, "GET", `/Users/${report}`);
    expect((await scim(t, c, "DELETE", `/Users/${boss}`)).statusCode).toBe(204);
    const patched = await scim(t, c, "PATCH", `/Users/${report}`, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "replace", path: "displayName", value: "Report" }],
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()[ENTERPRISE_SCHEMA]).toEqual({ department: "Ops" });
  });

  it("a manager value that is not a UUID, or names nobody, stays; the delete of a user with no reports writes none", async () => {
    const named = await create("named@example.com", { manager: { value: "271" } });
    const gone = await create("gone@example.com");
    expect((await scim(t, c, "DELETE", `/Users/${gone}`)).statusCode).toBe(204);
    expect((await get(named))[ENTERPRISE_SCHEMA].manager).toEqual({ value: "271" });
    const events = await t.recorder.events();
    expect(events.map((e) => e.kind)).toEqual(["user.created", "user.created", "user.deleted"]);
  });

  it("the reports are found by the manager index", async () => {
    // With statistics, as autovacuum keeps them (on a table never analyzed, every index that leads with the
    // organization looks as cheap as any other for a handful of rows, and the planner's pick among them is
    // arbitrary), and without the sequential scan that is cheapest for the few rows of a test.
    await sql`analyze identities`.execute(t.db);
    const plan = await t.db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      const { rows } = await sql<{ "QUERY PLAN": string }>`explain
        select id from identities where organization_id = ${c.organizationId} and manager_id = ${c.organizationId}`.execute(
        trx,
      );
      return rows.map((r) => r["QUERY PLAN"]).join("\n");
    });
    expect(plan).toContain("identities_manager_idx");
  });
});
