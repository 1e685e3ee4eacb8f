import { beforeAll, describe, expect, it } from "vitest";
import { adminCall, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/** GET /v2alpha1/admin/identities?organization_id=… (paged) and GET …/identities/{id}. */
const { t, c } = useTestApp({ seed: true });
let other: SeededClient;
const ids: string[] = [];

beforeAll(async () => {
  other = await seedClient(t);
  for (let i = 0; i < 5; i++) {
    const res = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: `adm${i}@example.com` });
    ids.push(res.json().id);
  }
  await scim(t, other, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "elsewhere@example.com" });
});

describe("admin identities", () => {
  it("lists one organization's identities page by page, in id order", async () => {
    const seen: string[] = [];
    let token = "";
    for (let pages = 0; pages < 5; pages++) {
      const res = await adminCall(
        t,
        "GET",
        `/identities?organization_id=${c.organizationId}&page_size=2${token === "" ? "" : `&page_token=${token}`}`,
      );
      expect(res.statusCode).toBe(200);
      seen.push(...res.json().identities.map((i: { id: string }) => i.id));
      token = res.json().next_page_token;
      if (token === "") break;
    }
    expect(seen).toEqual([...ids].sort());
  });

  it("shows an identity with its traits and state, without credentials", async () => {
    const res = await adminCall(t, "GET", `/identities/${ids[0]}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      id: ids[0],
      organization_id: c.organizationId,
      state: "active",
      user_name: "adm0@example.com",
      traits: { username: "adm0@example.com" },
      has_password: false,
    });
    expect(res.json().password_hash).toBeUndefined();
  });

  it("answers 404 for unknown and malformed ids, 400 for a malformed organization_id", async () => {
    expect((await adminCall(t, "GET", "/identities/00000000-0000-4000-8000-000000000000")).statusCode).toBe(404);
    expect((await adminCall(t, "GET", "/identities/nope")).statusCode).toBe(404);
    expect((await adminCall(t, "GET", "/identities?organization_id=nope")).statusCode).toBe(400);
  });

  it("needs the admin token", async () => {
    const res = await t.request({ method: "GET", url: "/v2alpha1/admin/identities" });
    expect(res.statusCode).toBe(401);
  });
});
