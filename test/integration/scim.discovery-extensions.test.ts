import { beforeAll, describe, expect, it } from "vitest";
import {
  CONTOSO_EXTENSION,
  CONTOSO_GROUP_EXTENSION,
  CONTOSO_GROUP_URN,
  CONTOSO_URN,
  OKTA_COST_CODE_AS_SHOWN,
  OKTA_EXTENSION,
  OKTA_URN,
} from "../helpers/extensions.js";
import { type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { ENTERPRISE_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/** RFC 7643 §6 and §7: a client's /Schemas and /ResourceTypes show the extensions it declared, and only those. */
const { t } = useTestApp();
let okta: SeededClient;
let plain: SeededClient;

beforeAll(async () => {
  okta = await seedClient(t, { extensions: [{ ...OKTA_EXTENSION, required: true }] });
  plain = await seedClient(t);
});

describe("discovery of declared extensions", () => {
  it("/Schemas lists the extension with full attribute definitions", async () => {
    const res = await scim(t, okta, "GET", "/Schemas");
    const ids = res.json().Resources.map((s: { id: string }) => s.id);
    expect(ids).toContain(OKTA_URN);
    const schema = res.json().Resources.find((s: { id: string }) => s.id === OKTA_URN);
    expect(schema).toMatchObject({ name: "AcmeUser", description: "Acme's custom Okta attributes" });
    expect(schema.attributes[0]).toEqual(OKTA_COST_CODE_AS_SHOWN);
    expect(schema.attributes.map((a: { name: string; type: string }) => `${a.name}:${a.type}`)).toEqual([
      "costCode:string",
      "badgeId:string",
      "isContractor:boolean",
      "startDate:dateTime",
      "level:integer",
    ]);
  });

  it("/Schemas/{urn} answers the extension by its URN in any case", async () => {
    const res = await scim(t, okta, "GET", `/Schemas/${OKTA_URN.toUpperCase()}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: OKTA_URN, meta: { resourceType: "Schema" } });
  });

  it("/ResourceTypes/User lists it under schemaExtensions with required", async () => {
    const res = await scim(t, okta, "GET", "/ResourceTypes/User");
    expect(res.json().schemaExtensions).toEqual([
      { schema: ENTERPRISE_SCHEMA, required: false },
      { schema: OKTA_URN, required: true },
    ]);
    const all = await scim(t, okta, "GET", "/ResourceTypes");
    const user = all.json().Resources.find((r: { id: string }) => r.id === "User");
    expect(user.schemaExtensions).toHaveLength(2);
  });

  it("a client without extensions sees the standard contract only", async () => {
    expect((await scim(t, plain, "GET", `/Schemas/${OKTA_URN}`)).statusCode).toBe(404);
    expect((await scim(t, plain, "GET", "/Schemas")).json().totalResults).toBe(3);
    expect((await scim(t, plain, "GET", "/ResourceTypes/User")).json().schemaExtensions).toEqual([
      { schema: ENTERPRISE_SCHEMA, required: false },
    ]);
  });

  it("a changed declaration shows at once on this instance", async () => {
    const c = await seedClient(t, { extensions: [OKTA_EXTENSION] });
    await scim(t, c, "GET", "/Schemas");
    const patched = await t.request({
      method: "PATCH",
      url: `/v2alpha1/admin/scimClients/${c.clientId}?update_mask=extensions`,
      headers: { authorization: "Bearer test-admin-token-0123456789" },
      payload: { extensions: [CONTOSO_EXTENSION] },
    });
    expect(patched.statusCode).toBe(200);
    const ids = (await scim(t, c, "GET", "/Schemas")).json().Resources.map((s: { id: string }) => s.id);
    expect(ids).toContain(CONTOSO_URN);
    expect(ids).not.toContain(OKTA_URN);
  });

  it("a required extension must be present on create", async () => {
    const res = await scim(t, okta, "POST", "/Users", { userName: "no-extension@acme.example" });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toMatch(/urn:okta:acme:1.0:user is required/);
    const ok = await scim(t, okta, "POST", "/Users", { userName: "with@acme.example", [OKTA_URN]: { level: 1 } });
    expect(ok.statusCode, ok.body).toBe(201);
  });
});

describe("discovery of declared Group extensions", () => {
  let both: SeededClient;
  beforeAll(async () => {
    both = await seedClient(t, { extensions: [OKTA_EXTENSION, { ...CONTOSO_GROUP_EXTENSION, required: true }] });
  });

  it("/Schemas and /Schemas/{urn} list the Group extension with full attribute definitions", async () => {
    const ids = (await scim(t, both, "GET", "/Schemas")).json().Resources.map((s: { id: string }) => s.id);
    expect(ids).toContain(CONTOSO_GROUP_URN);
    const res = await scim(t, both, "GET", `/Schemas/${CONTOSO_GROUP_URN}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: CONTOSO_GROUP_URN, name: "ContosoGroup" });
    expect(res.json().attributes.find((a: { name: string }) => a.name === "owners")).toMatchObject({
      type: "complex",
      multiValued: true,
      subAttributes: [
        { name: "value", type: "string" },
        { name: "display", type: "string" },
      ],
    });
    expect(res.json().attributes.find((a: { name: string }) => a.name === "groupCode")).toMatchObject({
      uniqueness: "server",
      caseExact: true,
    });
  });

  it("/ResourceTypes/Group lists it under schemaExtensions with required; /ResourceTypes/User does not", async () => {
    const group = await scim(t, both, "GET", "/ResourceTypes/Group");
    expect(group.json().schemaExtensions).toEqual([{ schema: CONTOSO_GROUP_URN, required: true }]);
    const user = await scim(t, both, "GET", "/ResourceTypes/User");
    expect(user.json().schemaExtensions).toEqual([
      { schema: ENTERPRISE_SCHEMA, required: false },
      { schema: OKTA_URN, required: false },
    ]);
    expect((await scim(t, plain, "GET", "/ResourceTypes/Group")).json().schemaExtensions).toEqual([]);
  });
});
