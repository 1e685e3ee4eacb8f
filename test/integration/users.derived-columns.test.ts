import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { ENTERPRISE_SCHEMA, PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { scim } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * `identities.manager_id` (the enterprise manager's value when it is a UUID) and `identities.modified_hour`
 * (`updated_at` to the hour) are written by Roster with the document, not computed by PostgreSQL: every path that
 * writes a user — create, the one-statement PATCH and PUT, the locked write of a password, the clearing of a deleted
 * manager — must write them as the definitions below say. The clock is the app's own, set by the test.
 */
const { t, c } = useTestApp({ seed: true });

/** The users of the organization whose columns differ from their definitions, by userName. */
async function drifted(): Promise<string[]> {
  const { rows } = await sql<{ user_name: string }>`select user_name from identities
    where organization_id = ${c.organizationId}::uuid and (
      manager_id is distinct from (case when scim -> ${ENTERPRISE_SCHEMA} -> 'manager' ->> 'value'
          ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
        then (scim -> ${ENTERPRISE_SCHEMA} -> 'manager' ->> 'value')::uuid end)
      or modified_hour is distinct from date_bin('1 hour', updated_at, timestamptz '2000-01-01 00:00:00+00'))
    order by user_name`.execute(t.db);
  return rows.map((r) => r.user_name);
}

const columnsOf = async (id: string) => {
  const { rows } = await sql<{ manager_id: string | null; hour: string }>`select manager_id,
      to_char(modified_hour at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI') as hour
    from identities where id = ${id}::uuid`.execute(t.db);
  return rows[0];
};

const create = async (userName: string, manager?: string) => {
  const res = await scim(t, c, "POST", "/Users", {
    schemas: manager === undefined ? [USER_SCHEMA] : [USER_SCHEMA, ENTERPRISE_SCHEMA],
    userName,
    ...(manager === undefined ? {} : { [ENTERPRISE_SCHEMA]: { manager: { value: manager } } }),
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
};

const patch = async (id: string, operations: unknown[]) => {
  const res = await scim(t, c, "PATCH", `/Users/${id}`, { schemas: [PATCH_OP], Operations: operations });
  expect(res.statusCode, res.body).toBe(200);
};

describe("the columns Roster derives from a user's document", () => {
  it("follow the manager and the hour through every kind of write", async () => {
    t.clock.set(new Date("2026-05-04T10:59:59.999Z"));
    const boss = await create("boss@example.com");
    const report = await create("report@example.com", boss.toUpperCase());
    expect(await columnsOf(report)).toEqual({ manager_id: boss, hour: "2026-05-04T10:00" });

    // The one-statement PATCH, one millisecond later: the next hour, and a manager that names no user by UUID.
    t.clock.advance(1);
    await patch(report, [{ op: "replace", path: `${ENTERPRISE_SCHEMA}:manager.value`, value: "not-a-uuid" }]);
    expect(await columnsOf(report)).toEqual({ manager_id: null, hour: "2026-05-04T11:00" });
    await patch(report, [{ op: "replace", path: `${ENTERPRISE_SCHEMA}:manager`, value: { value: boss } }]);
    expect((await columnsOf(report))?.manager_id).toBe(boss);

    // A PUT with a password takes the locked write.
    t.clock.advance(3_600_000);
    const put = await scim(t, c, "PUT", `/Users/${report}`, {
      schemas: [USER_SCHEMA],
      userName: "report@example.com",
      password: "a new passphrase for the report",
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(await columnsOf(report)).toEqual({ manager_id: null, hour: "2026-05-04T12:00" });
    await patch(report, [{ op: "add", path: `${ENTERPRISE_SCHEMA}:manager`, value: { value: boss } }]);
    expect((await columnsOf(report))?.manager_id).toBe(boss);

    // Deleting the manager clears it on its report, in the same transaction.
    t.clock.advance(3_600_000);
    expect((await scim(t, c, "DELETE", `/Users/${boss}`)).statusCode).toBe(204);
    expect(await columnsOf(report)).toEqual({ manager_id: null, hour: "2026-05-04T13:00" });

    expect(await drifted()).toEqual([]);
  });

  it("are set for a user that an instance of the previous release creates during a rolling restart", async () => {
    // That release's create, which names neither column: the hour is the current one, the manager unresolved.
    const { rows } = await sql<{ hour_is_now: boolean; manager_id: string | null }>`
      insert into identities (id, organization_id, user_name, scim, created_at, updated_at)
      values (gen_random_uuid(), ${c.organizationId}::uuid, 'previous@example.com',
        '{"userName": "previous@example.com"}'::jsonb, now(), now())
      returning modified_hour = date_bin('1 hour', updated_at, timestamptz '2000-01-01 00:00:00+00') as hour_is_now,
        manager_id`.execute(t.db);
    expect(rows[0]).toEqual({ hour_is_now: true, manager_id: null });
  });
});
