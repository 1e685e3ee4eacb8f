import { describe, expect, it } from "vitest";
import { scim } from "../helpers/seed.js";
import { ENTERPRISE_SCHEMA, PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/** The Enterprise User extension. */
const { t, c } = useTestApp({ seed: true });
let n = 0;

const create = async (body: Record<string, unknown>) => {
  const res = await scim(t, c, "POST", "/Users", {
    schemas: [USER_SCHEMA, ENTERPRISE_SCHEMA],
    userName: `ent${++n}@example.com`,
    ...body,
  });
  expect(res.statusCode).toBe(201);
  return res.json();
};

describe("Enterprise User extension", () => {
  it("stores and returns every Enterprise User field under the URN, with the URN in schemas", async () => {
    const boss = await create({ displayName: "Boss Lady" });
    const fields = {
      employeeNumber: "701984",
      costCenter: "4130",
      organization: "Universal Studios",
      division: "Theme Park",
      department: "Tour Operations",
    };
    const user = await create({ [ENTERPRISE_SCHEMA]: { ...fields, manager: { value: boss.id } } });
    expect(user.schemas).toEqual([USER_SCHEMA, ENTERPRISE_SCHEMA]);
    expect(user[ENTERPRISE_SCHEMA]).toEqual({ ...fields, manager: { value: boss.id, displayName: "Boss Lady" } });
    expect((await scim(t, c, "GET", `/Users/${user.id}`)).json()[ENTERPRISE_SCHEMA]).toEqual(user[ENTERPRISE_SCHEMA]);
  });

  it("resolves the manager's displayName from its userName when it has none, and ignores one sent by the IdP", async () => {
    const boss = await create({});
    const user = await create({ [ENTERPRISE_SCHEMA]: { manager: { value: boss.id, displayName: "Forged" } } });
    expect(user[ENTERPRISE_SCHEMA].manager).toEqual({ value: boss.id, displayName: boss.userName });
  });

  it("accepts a bare string manager value (Entra)", async () => {
    const boss = await create({ displayName: "B" });
    const user = await create({ [ENTERPRISE_SCHEMA]: { manager: boss.id } });
    expect(user[ENTERPRISE_SCHEMA].manager).toEqual({ value: boss.id, displayName: "B" });
  });

  it("leaves displayName out for an unknown manager", async () => {
    const user = await create({ [ENTERPRISE_SCHEMA]: { manager: { value: "00000000-0000-4000-8000-000000000000" } } });
    expect(user[ENTERPRISE_SCHEMA].manager).toEqual({ value: "00000000-0000-4000-8000-000000000000" });
  });

  it("patches manager.value and follows the new manager", async () => {
    const first = await create({ displayName: "First" });
    const second = await create({ displayName: "Second" });
    const user = await create({ [ENTERPRISE_SCHEMA]: { manager: { value: first.id } } });
    const res = await scim(t, c, "PATCH", `/Users/${user.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: `${ENTERPRISE_SCHEMA}:manager.value`, value: second.id }],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()[ENTERPRISE_SCHEMA].manager).toEqual({ value: second.id, displayName: "Second" });
  });

  it("drops the URN from schemas when the extension is emptied", async () => {
    const user = await create({ [ENTERPRISE_SCHEMA]: { department: "D" } });
    const res = await scim(t, c, "PATCH", `/Users/${user.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "remove", path: `${ENTERPRISE_SCHEMA}:department` }],
    });
    expect(res.json().schemas).toEqual([USER_SCHEMA]);
    expect(res.json()[ENTERPRISE_SCHEMA]).toBeUndefined();
  });

  it("refuses a wrongly typed field with 400 invalidSyntax", async () => {
    const res = await scim(t, c, "POST", "/Users", {
      schemas: [USER_SCHEMA, ENTERPRISE_SCHEMA],
      userName: `bad${++n}@example.com`,
      [ENTERPRISE_SCHEMA]: { department: 7 },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidSyntax");
  });
});
