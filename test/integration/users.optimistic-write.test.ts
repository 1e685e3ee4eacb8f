import { describe, expect, it } from "vitest";
import * as repo from "../../src/directory/identities/repo.js";
import { scim } from "../helpers/seed.js";
import { PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

const { t, c } = useTestApp({ seed: true });

const values = (displayName: string) => ({
  user_name: "opti@example.com",
  external_id: null,
  employee_number: null,
  active: true,
  manager_id: null,
  scim: { schemas: [USER_SCHEMA], userName: "opti@example.com", displayName },
  traits: {},
  now: new Date(),
});

describe("optimistic PATCH/PUT writes (one guarded statement)", () => {
  it("applies a write only while the row is unchanged since it was read", async () => {
    const created = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "opti@example.com" });
    const id = created.json().id as string;
    const read = await repo.readUser(t.db, c.organizationId, id, false);
    if (read === undefined) throw new Error("user not read");

    // Someone else changes the user between our read and our write.
    const other = await scim(t, c, "PATCH", `/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "displayName", value: "theirs" }],
    });
    expect(other.statusCode).toBe(200);

    const stale = await repo.updateUserAt(t.db, c.organizationId, id, read.version, values("ours"), false, undefined);
    expect(stale).toBeUndefined();
    expect((await scim(t, c, "GET", `/Users/${id}`)).json().displayName).toBe("theirs");

    const fresh = await repo.readUser(t.db, c.organizationId, id, false);
    if (fresh === undefined) throw new Error("user not read");
    expect(fresh.version).not.toBe(read.version);
    const applied = await repo.updateUserAt(
      t.db,
      c.organizationId,
      id,
      fresh.version,
      values("ours"),
      false,
      undefined,
    );
    expect(applied?.id).toBe(id);
    expect((await scim(t, c, "GET", `/Users/${id}`)).json().displayName).toBe("ours");
  });

  it("keeps every one of many concurrent PATCHes of one user (no lost update)", async () => {
    const created = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "race@example.com" });
    const id = created.json().id as string;
    const phones = Array.from({ length: 12 }, (_, i) => `+1555000${String(i).padStart(4, "0")}`);
    const results = await Promise.all(
      phones.map((value) =>
        scim(t, c, "PATCH", `/Users/${id}`, {
          schemas: [PATCH_OP],
          Operations: [{ op: "add", path: "phoneNumbers", value: [{ value, type: "work" }] }],
        }),
      ),
    );
    for (const r of results) expect(r.statusCode).toBe(200);
    const stored = (await scim(t, c, "GET", `/Users/${id}`)).json().phoneNumbers as Array<{ value: string }>;
    expect(stored.map((p) => p.value).sort()).toEqual([...phones].sort());
  });
});
