import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { genericPlanOf, openExplainer } from "../helpers/query-spy.js";
import { USER_SCHEMA } from "../helpers/constants.js";
import { scim } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * A write returns the user with its manager's name, looked up in the same statement. The first writes of a new
 * directory plan that statement on a small table never analysed, and the plan is kept for the connection's later
 * writes: the lookup must be the primary key's there too, never a scan of the organization's users filtered by id.
 */
const { t, c, database } = useTestApp({ queries: true, seed: true });
let explainer: pg.Client;

beforeAll(async () => {
  for (let n = 0; n < 60; n++) {
    const res = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: `early${n}@example.com` });
    expect(res.statusCode, res.body).toBe(201);
  }
  explainer = await openExplainer(database);
});
afterAll(async () => {
  await explainer?.end();
});

describe("the manager's name in a write's answer", () => {
  it("is read by primary key in the generic plan of a create made before any ANALYZE", async () => {
    const before = t.queries.queries.length;
    const res = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "planned@example.com" });
    expect(res.statusCode, res.body).toBe(201);
    const create = t.queries.queries.slice(before).find((q) => q.sql.includes("insert into identities"));
    expect(create).toBeDefined();
    if (create === undefined) return;
    const plan = await genericPlanOf(explainer, create);
    const lookup = plan.slice(plan.indexOf("SubPlan 1"), plan.indexOf("SubPlan 1") + 300);
    expect(lookup, plan).toContain("identities_pkey on identities mi");
    expect(lookup, plan).not.toContain("Filter: (id = ");
  });
});
