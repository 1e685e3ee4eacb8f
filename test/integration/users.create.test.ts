import { describe, expect, it } from "vitest";
import { scim } from "../helpers/seed.js";
import { ENTERPRISE_SCHEMA, PUBLIC_URL, USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const { t, c } = useTestApp({ seed: true });
let n = 0;
const unique = (prefix = "user") => `${prefix}${++n}-${Date.now()}@example.com`;

describe("POST /Users creates an identity", () => {
  it("answers 201 with the full user, meta and a Location header", async () => {
    const userName = unique();
    const res = await scim(t, c, "POST", "/Users", {
      schemas: [USER_SCHEMA],
      userName,
      name: { givenName: "Barbara", familyName: "Jensen" },
      emails: [{ value: userName, type: "work", primary: true }],
    });
    expect(res.statusCode).toBe(201);
    expect(res.headers["content-type"]).toMatch(/^application\/scim\+json/);
    const body = res.json();
    expect(body.id).toMatch(UUID);
    expect(body).toMatchObject({
      schemas: [USER_SCHEMA],
      userName,
      active: true,
      name: { givenName: "Barbara", familyName: "Jensen" },
      emails: [{ value: userName, type: "work", primary: true }],
    });
    const location = `${PUBLIC_URL}/scim/${c.clientId}/v2/Users/${body.id}`;
    expect(body.meta).toEqual({
      resourceType: "User",
      created: t.clock.now().toISOString(),
      lastModified: t.clock.now().toISOString(),
      location,
      version: 'W/"0"',
    });
    expect(res.headers.location).toBe(location);
    expect(res.headers.etag).toBe('W/"0"');
  });

  it("returns on GET what the IdP wrote", async () => {
    const created = await scim(t, c, "POST", "/Users", {
      schemas: [USER_SCHEMA, ENTERPRISE_SCHEMA],
      userName: unique(),
      externalId: "ext-1",
      displayName: "Babs",
      timezone: "Europe/Paris",
      phoneNumbers: [{ value: "+1 555", type: "work" }],
      [ENTERPRISE_SCHEMA]: { department: "R&D", employeeNumber: "42" },
    });
    expect(created.statusCode).toBe(201);
    const got = await scim(t, c, "GET", `/Users/${created.json().id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(created.json());
    expect(got.json()).toMatchObject({
      externalId: "ext-1",
      timezone: "Europe/Paris",
      [ENTERPRISE_SCHEMA]: { department: "R&D", employeeNumber: "42" },
    });
  });

  it('defaults active to true and accepts active false, also as the string "False"', async () => {
    const omitted = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: unique() });
    expect(omitted.json().active).toBe(true);
    const off = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: unique(), active: "False" });
    expect(off.statusCode).toBe(201);
    expect(off.json().active).toBe(false);
  });

  it("ignores read-only id, groups and meta and unknown attributes of known schemas", async () => {
    const res = await scim(t, c, "POST", "/Users", {
      schemas: [USER_SCHEMA],
      id: "00000000-0000-4000-8000-000000000000",
      userName: unique(),
      groups: [{ value: "00000000-0000-4000-8000-000000000001" }],
      meta: { resourceType: "Nope", created: "2000-01-01T00:00:00Z" },
      favouriteColour: "teal",
      [ENTERPRISE_SCHEMA]: { shoeSize: 44, costCenter: "CC1" },
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.id).not.toBe("00000000-0000-4000-8000-000000000000");
    expect(body.groups).toBeUndefined();
    expect(body.meta.resourceType).toBe("User");
    expect(body.favouriteColour).toBeUndefined();
    expect(body[ENTERPRISE_SCHEMA]).toEqual({ costCenter: "CC1" });
    expect(body.schemas).toEqual([USER_SCHEMA, ENTERPRISE_SCHEMA]);
  });

  it("accepts attribute names in any case and stores them in canonical spelling", async () => {
    const res = await scim(t, c, "POST", "/Users", {
      schemas: [USER_SCHEMA],
      USERNAME: unique(),
      Name: { GIVENNAME: "Ann" },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().name).toEqual({ givenName: "Ann" });
    expect(typeof res.json().userName).toBe("string");
  });
});

describe("validation: 400 invalidSyntax", () => {
  it.each([
    ["missing userName", { displayName: "x" }],
    ["empty userName", { userName: "" }],
    ["blank userName", { userName: "   " }],
    ["userName of the wrong type", { userName: 12 }],
    ["an invalid time zone", { userName: "tz@example.com", timezone: "Mars/Olympus" }],
    [
      "two primary emails",
      {
        userName: "p@example.com",
        emails: [
          { value: "a@example.com", primary: true },
          { value: "b@example.com", primary: "True" },
        ],
      },
    ],
    [
      "two primary phone numbers",
      {
        userName: "ph@example.com",
        phoneNumbers: [
          { value: "1", primary: true },
          { value: "2", primary: true },
        ],
      },
    ],
    ["a boolean that is not one", { userName: "b@example.com", active: "yes" }],
    ["a complex attribute given as a string", { userName: "n@example.com", name: "Ann" }],
    ["a body keyed by an unknown schema URN", { userName: "u@example.com", "urn:example:custom:1.0:User": { a: 1 } }],
  ])("refuses %s", async (_name, body) => {
    const res = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], ...body });
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidSyntax");
  });

  it("refuses a body that is not an object", async () => {
    const res = await scim(t, c, "POST", "/Users", ["nope"]);
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidSyntax");
  });

  it("accepts a valid IANA time zone", async () => {
    const res = await scim(t, c, "POST", "/Users", {
      schemas: [USER_SCHEMA],
      userName: unique(),
      timezone: "America/Los_Angeles",
    });
    expect(res.statusCode).toBe(201);
  });

  it("writes nothing when validation fails", async () => {
    const userName = unique();
    const bad = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName, timezone: "Nowhere/Never" });
    expect(bad.statusCode).toBe(400);
    const rows = await t.db.selectFrom("identities").select("id").where("user_name", "=", userName).execute();
    expect(rows).toHaveLength(0);
  });
});

describe("routes", () => {
  it("answers 404 for an unknown or malformed id", async () => {
    expect((await scim(t, c, "GET", "/Users/00000000-0000-4000-8000-000000000000")).statusCode).toBe(404);
    const res = await scim(t, c, "GET", "/Users/not-a-uuid");
    expect(res.statusCode).toBe(404);
    expect(res.json().schemas).toEqual(["urn:ietf:params:scim:api:messages:2.0:Error"]);
  });

  it("answers 405 for methods a path does not serve", async () => {
    const res = await scim(t, c, "DELETE", "/Users");
    expect(res.statusCode).toBe(405);
    const created = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: unique() });
    expect((await scim(t, c, "POST", `/Users/${created.json().id}`, {})).statusCode).toBe(405);
  });
});
