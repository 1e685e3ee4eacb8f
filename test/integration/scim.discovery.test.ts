import { describe, expect, it } from "vitest";
import { scim } from "../helpers/seed.js";
import { PUBLIC_URL } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

const { t, c } = useTestApp({ seed: true });

describe("ServiceProviderConfig", () => {
  it("has exactly the advertised values", async () => {
    const res = await scim(t, c, "GET", "/ServiceProviderConfig");
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/scim\+json/);
    const spc = res.json();
    expect(spc.schemas).toEqual(["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"]);
    expect(typeof spc.documentationUri).toBe("string");
    expect(spc.patch).toEqual({ supported: true });
    expect(spc.bulk.supported).toBe(false);
    expect(spc.filter).toEqual({ supported: true, maxResults: 1000 });
    expect(spc.changePassword).toEqual({ supported: true });
    expect(spc.sort).toEqual({ supported: true });
    expect(spc.etag).toEqual({ supported: true });
    expect(spc.pagination).toEqual({
      cursor: true,
      index: true,
      defaultPaginationMethod: "index",
      defaultPageSize: 100,
      maxPageSize: 1000,
      cursorTimeout: 3600,
    });
    expect(spc.authenticationSchemes).toHaveLength(1);
    expect(spc.authenticationSchemes[0]).toMatchObject({ type: "oauthbearertoken", primary: true });
    // The default connection accepts its secret and OAuth 2.0 tokens: both are bearer values.
    expect(spc.authenticationSchemes[0].description).toContain("/oauth/token");
    for (const key of ["name", "description", "specUri", "documentationUri"]) {
      expect(typeof spc.authenticationSchemes[0][key]).toBe("string");
    }
    expect(spc.meta.resourceType).toBe("ServiceProviderConfig");
  });
});

describe("ResourceTypes", () => {
  it("lists User (with the Enterprise extension) and Group", async () => {
    const res = await scim(t, c, "GET", "/ResourceTypes");
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.totalResults).toBe(2);
    const user = body.Resources.find((r: { id: string }) => r.id === "User");
    expect(user).toMatchObject({
      endpoint: "/Users",
      schema: "urn:ietf:params:scim:schemas:core:2.0:User",
      schemaExtensions: [{ schema: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User", required: false }],
    });
    expect(user.meta.location).toBe(`${PUBLIC_URL}${c.base}/ResourceTypes/User`);
    expect(body.Resources.find((r: { id: string }) => r.id === "Group")).toMatchObject({ endpoint: "/Groups" });
  });

  it.each(["User", "Group"])("serves /ResourceTypes/%s", async (id) => {
    const res = await scim(t, c, "GET", `/ResourceTypes/${id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().id).toBe(id);
  });

  it("answers 404 for an unknown resource type", async () => {
    expect((await scim(t, c, "GET", "/ResourceTypes/Device")).statusCode).toBe(404);
  });
});

describe("Schemas (RFC 7643 section 7)", () => {
  it("lists the User, Group and Enterprise User schemas", async () => {
    const res = await scim(t, c, "GET", "/Schemas");
    const ids = res
      .json()
      .Resources.map((s: { id: string }) => s.id)
      .sort();
    expect(ids).toEqual([
      "urn:ietf:params:scim:schemas:core:2.0:Group",
      "urn:ietf:params:scim:schemas:core:2.0:User",
      "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User",
    ]);
  });

  it("describes every attribute with the RFC 7643 characteristics", async () => {
    const res = await scim(t, c, "GET", "/Schemas/urn:ietf:params:scim:schemas:core:2.0:User");
    expect(res.statusCode).toBe(200);
    const attrs: Array<Record<string, unknown>> = res.json().attributes;
    const userName = attrs.find((a) => a.name === "userName");
    expect(userName).toMatchObject({
      type: "string",
      multiValued: false,
      required: true,
      caseExact: false,
      mutability: "readWrite",
      returned: "default",
      uniqueness: "server",
    });
    const password = attrs.find((a) => a.name === "password");
    expect(password).toMatchObject({ mutability: "writeOnly", returned: "never" });
    const emails = attrs.find((a) => a.name === "emails") as { subAttributes: Array<Record<string, unknown>> };
    expect(emails.subAttributes.find((s) => s.name === "type")?.canonicalValues).toEqual(["work", "home", "other"]);
    const groups = attrs.find((a) => a.name === "groups");
    expect(groups).toMatchObject({ mutability: "readOnly", multiValued: true });
  });

  it("describes the Enterprise manager with a read-only displayName", async () => {
    const res = await scim(t, c, "GET", "/Schemas/urn:ietf:params:scim:schemas:extension:enterprise:2.0:User");
    const manager = res.json().attributes.find((a: { name: string }) => a.name === "manager");
    const displayName = manager.subAttributes.find((s: { name: string }) => s.name === "displayName");
    expect(displayName.mutability).toBe("readOnly");
  });

  it("carries only RFC 7643 characteristics: Roster's own (length, filterable, resource id) stay out", async () => {
    const RFC_KEYS = new Set([
      "name",
      "type",
      "multiValued",
      "description",
      "required",
      "caseExact",
      "mutability",
      "returned",
      "uniqueness",
      "canonicalValues",
      "referenceTypes",
      "subAttributes",
    ]);
    const keys = new Set<string>();
    const walk = (attrs: Array<Record<string, unknown>>) => {
      for (const a of attrs) {
        for (const key of Object.keys(a)) keys.add(key);
        if (Array.isArray(a.subAttributes)) walk(a.subAttributes as Array<Record<string, unknown>>);
      }
    };
    for (const schema of (await scim(t, c, "GET", "/Schemas")).json().Resources) walk(schema.attributes);
    expect([...keys].filter((k) => !RFC_KEYS.has(k))).toEqual([]);
    expect(keys.has("subAttributes")).toBe(true);
  });

  it("answers 404 for an unknown schema URN", async () => {
    const res = await scim(t, c, "GET", "/Schemas/urn:example:nope");
    expect(res.statusCode).toBe(404);
  });
});
