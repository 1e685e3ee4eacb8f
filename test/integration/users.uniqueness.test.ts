import { beforeAll, describe, expect, it } from "vitest";
import { type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/** userName and email values are unique across the service, case-insensitively, by the database. */
const { t, c } = useTestApp({ seed: true });
let other: SeededClient;
let n = 0;
const fresh = () => `u${++n}-${Date.now()}@example.com`;

beforeAll(async () => {
  other = await seedClient(t);
});

const post = (client: SeededClient, body: Record<string, unknown>) =>
  scim(t, client, "POST", "/Users", { schemas: [USER_SCHEMA], ...body });

function expectUniqueness(res: { statusCode: number; json(): Record<string, unknown> }) {
  expect(res.statusCode).toBe(409);
  expect(res.json().scimType).toBe("uniqueness");
}

describe("within one organization: 409 uniqueness", () => {
  it("refuses a second user with the same userName, in any case", async () => {
    const userName = fresh();
    expect((await post(c, { userName })).statusCode).toBe(201);
    expectUniqueness(await post(c, { userName }));
    expectUniqueness(await post(c, { userName: userName.toUpperCase() }));
  });

  it("refuses an email another user has, and a userName equal to another user's email", async () => {
    const email = fresh();
    expect((await post(c, { userName: fresh(), emails: [{ value: email }] })).statusCode).toBe(201);
    expectUniqueness(await post(c, { userName: fresh(), emails: [{ value: email.toUpperCase() }] }));
    expectUniqueness(await post(c, { userName: email }));
  });

  it("lets one user repeat its userName as its email", async () => {
    const userName = fresh();
    const res = await post(c, {
      userName,
      emails: [{ value: userName, primary: true }, { value: userName.toUpperCase() }],
    });
    expect(res.statusCode).toBe(201);
  });

  it("refuses a PUT or PATCH that takes another user's identifier, and changes nothing", async () => {
    const taken = fresh();
    await post(c, { userName: taken });
    const user = (await post(c, { userName: fresh(), title: "Before" })).json();
    expectUniqueness(await scim(t, c, "PUT", `/Users/${user.id}`, { schemas: [USER_SCHEMA], userName: taken }));
    expectUniqueness(
      await scim(t, c, "PATCH", `/Users/${user.id}`, {
        schemas: [PATCH_OP],
        Operations: [
          { op: "replace", path: "title", value: "After" },
          { op: "add", path: "emails", value: [{ value: taken }] },
        ],
      }),
    );
    expect((await scim(t, c, "GET", `/Users/${user.id}`)).json()).toMatchObject({
      userName: user.userName,
      title: "Before",
    });
  });

  it("frees the identifiers of a deleted or renamed user", async () => {
    const userName = fresh();
    const user = (await post(c, { userName })).json();
    await scim(t, c, "PUT", `/Users/${user.id}`, { schemas: [USER_SCHEMA], userName: fresh() });
    const again = await post(c, { userName });
    expect(again.statusCode).toBe(201);
    await scim(t, c, "DELETE", `/Users/${again.json().id}`);
    expect((await post(c, { userName })).statusCode).toBe(201);
  });
});

describe("across organizations", () => {
  it("answers 409 uniqueness with detail `identity already exists in another scope`", async () => {
    const userName = fresh();
    expect((await post(other, { userName })).statusCode).toBe(201);
    const res = await post(c, { userName: userName.toUpperCase() });
    expectUniqueness(res);
    expect(res.json().detail).toBe("identity already exists in another scope");
  });

  it("says the same for a clashing email", async () => {
    const email = fresh();
    await post(other, { userName: fresh(), emails: [{ value: email }] });
    const res = await post(c, { userName: fresh(), emails: [{ value: email }] });
    expectUniqueness(res);
    expect(res.json().detail).toBe("identity already exists in another scope");
  });

  it("does not say it for a clash inside the organization", async () => {
    const userName = fresh();
    await post(c, { userName });
    expect((await post(c, { userName })).json().detail).not.toBe("identity already exists in another scope");
  });
});

describe("concurrency: the database decides", () => {
  it("10 parallel POSTs of one userName give exactly one 201 and nine 409", async () => {
    const userName = fresh();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => post(c, { userName: i % 2 === 0 ? userName : userName.toUpperCase() })),
    );
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes).toEqual([201, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    const rows = await t.db.selectFrom("identities").select("id").where("user_name", "ilike", userName).execute();
    expect(rows).toHaveLength(1);
  });
});
