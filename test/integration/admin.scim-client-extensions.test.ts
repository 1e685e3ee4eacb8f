import { beforeAll, describe, expect, it } from "vitest";
import { CONTOSO_EXTENSION, CONTOSO_URN, OKTA_COST_CODE_AS_SHOWN, OKTA_EXTENSION } from "../helpers/extensions.js";
import { adminCall } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

const { t } = useTestApp();
let orgId = "";

beforeAll(async () => {
  orgId = (await adminCall(t, "POST", "/organizations", { name: "Acme" })).json().id;
});

const create = (body: Record<string, unknown>) =>
  adminCall(t, "POST", "/scimClients", { organization_id: orgId, ...body });
const refused = async (extensions: unknown, message: RegExp) => {
  const res = await create({ extensions });
  expect(res.statusCode, res.body).toBe(400);
  expect(res.json().error.status).toBe("INVALID_ARGUMENT");
  expect(res.json().error.message).toMatch(message);
};
const attributes = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `a${i}` }));

describe("declaring extensions on a SCIM client", () => {
  it("stores the declaration with the defaults of RFC 7643 §2.2 and shows it on read", async () => {
    const res = await create({ extensions: [OKTA_EXTENSION], unknown_extensions: "store" });
    expect(res.statusCode, res.body).toBe(201);
    const read = (await adminCall(t, "GET", `/scimClients/${res.json().client_id}`)).json();
    expect(read.unknown_extensions).toBe("store");
    expect(read.extensions).toHaveLength(1);
    expect(read.extensions[0].attributes[0]).toEqual({ ...OKTA_COST_CODE_AS_SHOWN, filterable: true });
    // uniqueness "server" implies an index, so the attribute is filterable as well.
    expect(read.extensions[0].attributes[1]).toMatchObject({ name: "badgeId", uniqueness: "server", filterable: true });
  });

  it("defaults to no extensions and to refusing unknown ones", async () => {
    const res = await create({});
    expect(res.json()).toMatchObject({ extensions: [], unknown_extensions: "reject" });
  });

  it("PATCH with update_mask=extensions replaces the list; other masks leave it", async () => {
    const id = (await create({ extensions: [OKTA_EXTENSION] })).json().client_id;
    const renamed = await adminCall(t, "PATCH", `/scimClients/${id}?update_mask=name`, { name: "x", extensions: [] });
    expect(renamed.json().extensions).toHaveLength(1);
    const replaced = await adminCall(t, "PATCH", `/scimClients/${id}?update_mask=extensions,unknown_extensions`, {
      extensions: [CONTOSO_EXTENSION],
      unknown_extensions: "store",
    });
    expect(replaced.statusCode, replaced.body).toBe(200);
    expect(replaced.json().extensions.map((e: { schema: string }) => e.schema)).toEqual([CONTOSO_URN]);
    expect(replaced.json().unknown_extensions).toBe("store");
    const cleared = await adminCall(t, "PATCH", `/scimClients/${id}?update_mask=extensions`, {});
    expect(cleared.json().extensions).toEqual([]);
  });

  it("PATCH validates the same way as create", async () => {
    const id = (await create({})).json().client_id;
    const res = await adminCall(t, "PATCH", `/scimClients/${id}?update_mask=extensions`, {
      extensions: [{ ...OKTA_EXTENSION, schema: "not a urn" }],
    });
    expect(res.statusCode).toBe(400);
    const bad = await adminCall(t, "PATCH", `/scimClients/${id}?update_mask=unknown_extensions`, {
      unknown_extensions: "ignore",
    });
    expect(bad.statusCode).toBe(400);
  });
});

describe("refused declarations", () => {
  it("a schema that is not a URN", async () => {
    await refused([{ ...OKTA_EXTENSION, schema: "acme:user" }], /must be a URN/);
    await refused([{ ...OKTA_EXTENSION, schema: "urn:okta:acme:1.0:user:" }], /must be a URN/);
  });

  it("the core and enterprise URNs, and URNs nested under them", async () => {
    for (const schema of [
      "urn:ietf:params:scim:schemas:core:2.0:User",
      "URN:IETF:PARAMS:SCIM:SCHEMAS:EXTENSION:ENTERPRISE:2.0:USER",
      "urn:ietf:params:scim:schemas:core:2.0:User:costCode",
      "urn:ietf:params:scim:api:messages:2.0:PatchOp",
    ]) {
      await refused([{ ...OKTA_EXTENSION, schema }], /clashes with the standard schema/);
    }
  });

  it("two extensions of one client with the same or overlapping URNs", async () => {
    await refused(
      [OKTA_EXTENSION, { ...OKTA_EXTENSION, schema: "URN:okta:acme:1.0:USER" }],
      /clashes with the extension/,
    );
    await refused(
      [OKTA_EXTENSION, { ...OKTA_EXTENSION, schema: "urn:okta:acme:1.0:user:more" }],
      /clashes with the extension/,
    );
  });

  it("attribute names outside RFC 7643 §2.1, and duplicates in any case", async () => {
    for (const name of ["1st", "cost code", "cost.code", "$ref", ""]) {
      await refused([{ ...OKTA_EXTENSION, attributes: [{ name }] }], /RFC 7643 §2.1/);
    }
    await refused([{ ...OKTA_EXTENSION, attributes: [{ name: "code" }, { name: "CODE" }] }], /declared twice/);
  });

  it("more than 100 attributes in an extension, more than 10 extensions in a client", async () => {
    expect((await create({ extensions: [{ ...OKTA_EXTENSION, attributes: attributes(100) }] })).statusCode).toBe(201);
    await refused([{ ...OKTA_EXTENSION, attributes: attributes(101) }], /at most 100 attributes/);
    const many = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ ...OKTA_EXTENSION, schema: `urn:okta:acme${i}:1.0:user` }));
    expect((await create({ extensions: many(10) })).statusCode).toBe(201);
    await refused(many(11), /at most 10 extensions/);
  });

  it("more than 500 attributes in all, sub-attributes included: 400 naming the limit", async () => {
    const spread = (extensions: number, each: number, subs = 0) =>
      Array.from({ length: extensions }, (_, i) => ({
        ...OKTA_EXTENSION,
        schema: `urn:okta:acme${i}:1.0:user`,
        attributes: attributes(each).map((a) =>
          subs === 0 ? a : { ...a, type: "complex", subAttributes: attributes(subs) },
        ),
      }));
    // 10 × 50 = 500 attributes; 5 × 10 complex attributes of 9 sub-attributes = 50 + 450 = 500.
    expect((await create({ extensions: spread(10, 50) })).statusCode).toBe(201);
    expect((await create({ extensions: spread(5, 10, 9) })).statusCode).toBe(201);
    const over = spread(10, 50);
    over[9] = { ...OKTA_EXTENSION, schema: "urn:okta:acme9:1.0:user", attributes: attributes(51) };
    await refused(over, /^extensions may declare at most 500 attributes in all, sub-attributes included/);
    await refused(spread(5, 10, 10), /at most 500 attributes in all/);
    // What the per-extension limits alone allowed: 10 × 100 × 100.
    await refused(spread(10, 100, 100), /at most 500 attributes in all|at most 262144 bytes as JSON/);
  });

  it("a declaration over 262144 bytes of JSON: 400 naming the limit", async () => {
    const described = (i: number) => ({
      ...OKTA_EXTENSION,
      schema: `urn:okta:acme${i}:1.0:user`,
      attributes: attributes(50).map((a) => ({ ...a, description: "d".repeat(1000) })),
    });
    // 5 × 50 attributes of 1 000-character descriptions: about 256 000 bytes, under the limit; 6: over it.
    expect((await create({ extensions: [0, 1, 2, 3, 4].map(described) })).statusCode).toBe(201);
    await refused([0, 1, 2, 3, 4, 5].map(described), /^extensions must be at most 262144 bytes as JSON/);
  });

  it("bad characteristics, unknown fields, indexes on what cannot be indexed, resource types", async () => {
    const one = (attribute: Record<string, unknown>) => [{ ...OKTA_EXTENSION, attributes: [attribute] }];
    await refused(one({ name: "a", type: "binary" }), /type must be one of/);
    await refused(one({ name: "a", mutability: "sometimes" }), /mutability must be one of/);
    await refused(one({ name: "a", uniqueness: "global" }), /uniqueness must be one of/);
    await refused(one({ name: "a", multiValued: "yes" }), /must be a boolean/);
    await refused(one({ name: "a", colour: "red" }), /must not have the field colour/);
    await refused(one({ name: "a", type: "integer", filterable: true }), /may be filterable or unique/);
    await refused(one({ name: "a", multiValued: true, uniqueness: "server" }), /may be filterable or unique/);
    await refused(one({ name: "a", type: "complex" }), /subAttributes must be a non-empty array/);
    await refused(
      one({
        name: "a",
        type: "complex",
        subAttributes: [{ name: "b", type: "complex", subAttributes: [{ name: "c" }] }],
      }),
      /cannot be complex/,
    );
    await refused([{ ...OKTA_EXTENSION, resource: "Device" }], /resource must be one of User, Group/);
    await refused([{ ...OKTA_EXTENSION, name: "" }], /name is required/);
    await refused({ schema: OKTA_EXTENSION.schema }, /must be an array/);
  });
});
