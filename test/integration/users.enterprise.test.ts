import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { type SeededClient, scim, seedClient } from "../helpers/seed.js";

/** Issue 3 point 8 and spec 2.2: the Enterprise User extension. */
const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
let t: TestApp;
let c: SeededClient;
let n = 0;

beforeAll(async () => {
  t = await createTestApp();
  c = await seedClient(t);
});
afterAll(async () => t.close());

const create = async (body: Record<string, unknown>) => {
  const res = await scim(t, c, "POST", "/Users", {
    schemas: [USER, ENTERPRISE],
    userName: `ent${++n}@example.com`,
    ...body,
  });
  expect(res.statusCode).toBe(201);
  return res.json();
};

describe("Enterprise User extension", () => {
  it("stores and returns every field of spec 2.2 under the URN, with the URN in schemas", async () => {
    const boss = await create({ displayName: "Boss Lady" });
    const fields = {
      employeeNumber: "701984",
      costCenter: "4130",
      organization: "Universal Studios",
      division: "Theme Park",
      department: "Tour Operations",
    };
    const user = await create({ [ENTERPRISE]: { ...fields, manager: { value: boss.id } } });
    expect(user.schemas).toEqual([USER, ENTERPRISE]);
    expect(user[ENTERPRISE]).toEqual({ ...fields, manager: { value: boss.id, displayName: "Boss Lady" } });
    expect((await scim(t, c, "GET", `/Users/${user.id}`)).json()[ENTERPRISE]).toEqual(user[ENTERPRISE]);
  });

  it("resolves the manager's displayName from its userName when it has none, and ignores one sent by the IdP", async () => {
    const boss = await create({});
    const user = await create({ [ENTERPRISE]: { manager: { value: boss.id, displayName: "Forged" } } });
    expect(user[ENTERPRISE].manager).toEqual({ value: boss.id, displayName: boss.userName });
  });

  it("accepts a bare string manager value (Entra)", async () => {
    const boss = await create({ displayName: "B" });
    const user = await create({ [ENTERPRISE]: { manager: boss.id } });
    expect(user[ENTERPRISE].manager).toEqual({ value: boss.id, displayName: "B" });
  });

  it("leaves displayName out for an unknown manager", async () => {
    const user = await create({ [ENTERPRISE]: { manager: { value: "00000000-0000-4000-8000-000000000000" } } });
    expect(user[ENTERPRISE].manager).toEqual({ value: "00000000-0000-4000-8000-000000000000" });
  });

  it("patches manager.value and follows the new manager", async () => {
    const first = await create({ displayName: "First" });
    const second = await create({ displayName: "Second" });
    const user = await create({ [ENTERPRISE]: { manager: { value: first.id } } });
    const res = await scim(t, c, "PATCH", `/Users/${user.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: `${ENTERPRISE}:manager.value`, value: second.id }],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()[ENTERPRISE].manager).toEqual({ value: second.id, displayName: "Second" });
  });

  it("drops the URN from schemas when the extension is emptied", async () => {
    const user = await create({ [ENTERPRISE]: { department: "D" } });
    const res = await scim(t, c, "PATCH", `/Users/${user.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "remove", path: `${ENTERPRISE}:department` }],
    });
    expect(res.json().schemas).toEqual([USER]);
    expect(res.json()[ENTERPRISE]).toBeUndefined();
  });

  it("refuses a wrongly typed field with 400 invalidSyntax", async () => {
    const res = await scim(t, c, "POST", "/Users", {
      schemas: [USER, ENTERPRISE],
      userName: `bad${++n}@example.com`,
      [ENTERPRISE]: { department: 7 },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidSyntax");
  });
});
