import { beforeAll, describe, expect, it } from "vitest";
import { CONTOSO_EXTENSION, CONTOSO_URN, OKTA_EXTENSION, OKTA_URN } from "../helpers/extensions.js";
import { type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { PATCH_OP } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/** uniqueness "server" on an extension attribute: 409 uniqueness within the organization, enforced by an index. */
const { t } = useTestApp();
let entra: SeededClient;
let n = 0;

beforeAll(async () => {
  entra = await seedClient(t, { extensions: [CONTOSO_EXTENSION] });
});

const user = (badge: string) => ({ userName: `badge${++n}@contoso.example`, [CONTOSO_URN]: { employeeBadge: badge } });

describe("unique extension attributes", () => {
  it("a second user with the same value is 409 uniqueness; case-insensitively unless caseExact", async () => {
    expect((await scim(t, entra, "POST", "/Users", user("EB-1"))).statusCode).toBe(201);
    for (const badge of ["EB-1", "eb-1"]) {
      const clash = await scim(t, entra, "POST", "/Users", user(badge));
      expect(clash.statusCode).toBe(409);
      expect(clash.json().scimType).toBe("uniqueness");
    }
    // badgeId of the Okta extension is caseExact: another case is another value.
    const okta = await seedClient(t, { extensions: [OKTA_EXTENSION] });
    const first = await scim(t, okta, "POST", "/Users", { userName: "o1@acme.example", [OKTA_URN]: { badgeId: "Ab" } });
    expect(first.statusCode).toBe(201);
    const other = await scim(t, okta, "POST", "/Users", { userName: "o2@acme.example", [OKTA_URN]: { badgeId: "aB" } });
    expect(other.statusCode).toBe(201);
    const same = await scim(t, okta, "POST", "/Users", { userName: "o3@acme.example", [OKTA_URN]: { badgeId: "Ab" } });
    expect(same.statusCode).toBe(409);
  });

  it("PUT and PATCH onto a taken value are 409 and change nothing; the user's own value is no clash", async () => {
    await scim(t, entra, "POST", "/Users", user("EB-2"));
    const mine = (await scim(t, entra, "POST", "/Users", user("EB-3"))).json();
    const patch = await scim(t, entra, "PATCH", `/Users/${mine.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: `${CONTOSO_URN}:employeeBadge`, value: "EB-2" }],
    });
    expect(patch.statusCode).toBe(409);
    const put = await scim(t, entra, "PUT", `/Users/${mine.id}`, { ...user("EB-2"), userName: mine.userName });
    expect(put.statusCode).toBe(409);
    const unchanged = await scim(t, entra, "GET", `/Users/${mine.id}`);
    expect(unchanged.json()[CONTOSO_URN].employeeBadge).toBe("EB-3");
    const again = await scim(t, entra, "PUT", `/Users/${mine.id}`, {
      userName: mine.userName,
      displayName: "renamed",
      [CONTOSO_URN]: { employeeBadge: "EB-3" },
    });
    expect(again.statusCode, again.body).toBe(200);
  });

  it("a freed value can be taken: after a change and after a delete", async () => {
    const a = (await scim(t, entra, "POST", "/Users", user("EB-4"))).json();
    await scim(t, entra, "PATCH", `/Users/${a.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "remove", path: `${CONTOSO_URN}:employeeBadge` }],
    });
    expect((await scim(t, entra, "POST", "/Users", user("EB-4"))).statusCode).toBe(201);
    const b = (await scim(t, entra, "POST", "/Users", user("EB-5"))).json();
    expect((await scim(t, entra, "DELETE", `/Users/${b.id}`)).statusCode).toBe(204);
    expect((await scim(t, entra, "POST", "/Users", user("EB-5"))).statusCode).toBe(201);
  });

  it("concurrent creates with one value: exactly one wins (the index decides, not a check)", async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, () => scim(t, entra, "POST", "/Users", user("EB-race"))),
    );
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
  });

  it("uniqueness holds within an organization only", async () => {
    const elsewhere = await seedClient(t, { extensions: [CONTOSO_EXTENSION] });
    expect((await scim(t, elsewhere, "POST", "/Users", user("EB-1"))).statusCode).toBe(201);
  });

  it("with auto_link, a retried create links to the user holding the value instead of answering 409", async () => {
    const linking = await seedClient(t, { extensions: [CONTOSO_EXTENSION], auto_link: true });
    const body = user("EB-retry");
    const first = await scim(t, linking, "POST", "/Users", body);
    expect(first.statusCode).toBe(201);
    const retry = await scim(t, linking, "POST", "/Users", body);
    expect(retry.statusCode, retry.body).toBe(201);
    expect(retry.json().id).toBe(first.json().id);
    const stranger = await scim(t, linking, "POST", "/Users", user("EB-retry"));
    expect(stranger.statusCode).toBe(409);
  });
});
