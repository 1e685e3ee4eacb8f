import { beforeAll, describe, expect, it } from "vitest";
import { adminCall } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";
import { adminError } from "../helpers/errors.js";

/**
 * The domain's refusals reach the admin API through its one map (admin/domain-errors.ts), not through the routes:
 * each answer below is the whole error body, byte for byte what the routes answered when they translated them.
 */
const { t } = useTestApp();
const MISSING_ORG = "00000000-0000-7000-8000-000000000000";
let orgId: string;
beforeAll(async () => {
  orgId = (await adminCall(t, "POST", "/organizations", { name: "Errors" })).json().id;
});

describe("the domain's refusals in the admin error body", () => {
  it("a taken client_id is 409 ALREADY_EXISTS", async () => {
    const first = await adminCall(t, "POST", "/scimClients", { organization_id: orgId, client_id: "taken-id" });
    expect(first.statusCode).toBe(201);
    const res = await adminCall(t, "POST", "/scimClients", { organization_id: orgId, client_id: "taken-id" });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(adminError(409, "ALREADY_EXISTS", "client_id taken-id is taken"));
  });

  it("a SCIM client of a missing organization is 404 NOT_FOUND", async () => {
    const res = await adminCall(t, "POST", "/scimClients", { organization_id: MISSING_ORG });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual(adminError(404, "NOT_FOUND", `organization ${MISSING_ORG} does not exist`));
  });

  it("a setup link of a missing organization is 404 NOT_FOUND", async () => {
    const res = await adminCall(t, "POST", "/setupLinks", { organization_id: MISSING_ORG, intent: "directory_sync" });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual(adminError(404, "NOT_FOUND", `organization ${MISSING_ORG} does not exist`));
  });

  it("a filter the store cannot answer is 400 INVALID_ARGUMENT, named as the filter's", async () => {
    const filter = encodeURIComponent('password eq "x"');
    const res = await adminCall(t, "GET", `/organizations/${orgId}/users?filter=${filter}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT", details: [] });
    expect(res.json().error.message).toMatch(/^filter: ./);
  });
});
