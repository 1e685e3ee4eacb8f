import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, createTestDatabase, type TestApp, type TestDatabase } from "../helpers/app.js";
import { adminCall, scim, seedClient } from "../helpers/seed.js";
import { ERROR_SCHEMA, GROUP_SCHEMA, PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";

const user = (name: string) => ({ schemas: [USER_SCHEMA], userName: name });
const group = (name: string) => ({ schemas: [GROUP_SCHEMA], displayName: name });

// Two instances on one database: `a` serves the SCIM client (and keeps it in its client cache), `b` deletes it.
let database: TestDatabase;
let a: TestApp;
let b: TestApp;

beforeAll(async () => {
  database = await createTestDatabase();
  a = await createTestApp({ database, webhooks: true });
  b = await createTestApp({ database });
});
afterAll(async () => {
  await a.close();
  await b.close();
  await database.close();
});

/** A client (with a webhook unless asked), known to `a` (authenticated once, so cached), then deleted through `b`. */
async function deletedBehindA(remove: "client" | "organization", webhook = true) {
  const c = await seedClient(
    a,
    webhook ? { webhook: { url: "http://127.0.0.1:9/hook", secret: "whsec_race_0123456789" } } : {},
  );
  const existing = await scim(a, c, "POST", "/Users", user(`before-${c.clientId}@example.com`));
  expect(existing.statusCode).toBe(201);
  const deleted =
    remove === "client"
      ? await adminCall(b, "DELETE", `/scimClients/${c.clientId}`)
      : await adminCall(b, "DELETE", `/organizations/${c.organizationId}`);
  expect(deleted.statusCode).toBeLessThan(300);
  return { c, userId: existing.json().id as string };
}

function expectMissingClient(res: { statusCode: number; headers: Record<string, unknown>; json: () => unknown }) {
  expect(res.statusCode).toBe(404);
  expect(String(res.headers["content-type"])).toContain("application/scim+json");
  expect(res.json()).toMatchObject({ schemas: [ERROR_SCHEMA], status: "404", detail: "SCIM client not found" });
}

describe("a SCIM write racing the deletion of its client on another instance", () => {
  it("answers the 404 of a missing client to a create, not a 500", async () => {
    const { c } = await deletedBehindA("client");
    expectMissingClient(await scim(a, c, "POST", "/Users", user("after@example.com")));
    expectMissingClient(await scim(a, c, "POST", "/Groups", group("after")));
  });

  it("answers the 404 of a missing client to an update and a delete", async () => {
    const { c, userId } = await deletedBehindA("client");
    const patch = {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "nickName", value: "late" }],
    };
    expectMissingClient(await scim(a, c, "PATCH", `/Users/${userId}`, patch));
    expectMissingClient(await scim(a, c, "DELETE", `/Users/${userId}`));
  });

  it("answers the 404 of a missing client without a webhook too (its events are recorded all the same)", async () => {
    const { c, userId } = await deletedBehindA("client", false);
    expectMissingClient(await scim(a, c, "POST", "/Users", user("after-plain@example.com")));
    // The one-statement update, on the document `a` remembers from the create.
    expectMissingClient(
      await scim(a, c, "PATCH", `/Users/${userId}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "replace", path: "nickName", value: "late" }],
      }),
    );
    expectMissingClient(await scim(a, c, "DELETE", `/Users/${userId}`));
    expectMissingClient(await scim(a, c, "POST", "/Groups", group("after-plain")));
  });

  it("answers the 404 of a missing client when the whole organization was deleted", async () => {
    const { c } = await deletedBehindA("organization");
    expectMissingClient(await scim(a, c, "POST", "/Users", user("after-org@example.com")));
    expectMissingClient(await scim(a, c, "POST", "/Groups", group("after-org")));
  });
});
