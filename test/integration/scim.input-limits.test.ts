import { beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, MAX_USER_NAME_LENGTH } from "../../src/scim/limits.js";
import { createGroup } from "../helpers/groups.js";
import { scim } from "../helpers/seed.js";
import { ENTERPRISE_SCHEMA, ERROR_SCHEMA, PATCH_OP } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/** Input PostgreSQL cannot store or index is refused at the edge: 400 in the SCIM Error format, nothing written. */
const { t, c } = useTestApp({ seed: true });
let userId: string;
let groupId: string;

beforeAll(async () => {
  userId = (await scim(t, c, "POST", "/Users", { userName: "kept@example.com" })).json().id;
  groupId = (await createGroup(t, c, "Kept")).id;
});

/** Characters that do not compress: a long run of them really is long in an index entry. */
const incompressible = (n: number): string =>
  Array.from({ length: n }, (_, i) => String.fromCodePoint(0x4e00 + ((i * 7919) % 20_000))).join("");

const totals = async () => {
  const users = (await scim(t, c, "GET", "/Users?count=0")).json().totalResults;
  const groups = (await scim(t, c, "GET", "/Groups?count=0")).json().totalResults;
  return { users, groups };
};

const expectRefused = (res: { statusCode: number; headers: Record<string, unknown>; json(): unknown }) => {
  expect(res.statusCode).toBe(400);
  expect(String(res.headers["content-type"])).toMatch(/^application\/scim\+json/);
  const body = res.json() as { schemas: string[]; status: string; detail: string };
  expect(body.schemas).toEqual([ERROR_SCHEMA]);
  expect(body.status).toBe("400");
  return body;
};

const patchUser = (operations: unknown[]) =>
  scim(t, c, "PATCH", `/Users/${userId}`, { schemas: [PATCH_OP], Operations: operations });

describe("NUL characters and unpaired surrogates are refused wherever they are", () => {
  it.each([
    ["userName with NUL", () => scim(t, c, "POST", "/Users", { userName: "a\u0000b@example.com" }), "userName", "NUL"],
    [
      "userName with a lone high surrogate",
      () => scim(t, c, "POST", "/Users", { userName: "a\ud800b" }),
      "userName",
      "surrogate",
    ],
    [
      "a lone low surrogate in an email",
      () => scim(t, c, "POST", "/Users", { userName: "x@example.com", emails: [{ value: "\udc00@x" }] }),
      "emails[0].value",
      "surrogate",
    ],
    [
      "NUL in an extension attribute",
      () =>
        scim(t, c, "POST", "/Users", { userName: "y@example.com", [ENTERPRISE_SCHEMA]: { department: "R\u0000D" } }),
      `["${ENTERPRISE_SCHEMA}"].department`,
      "NUL",
    ],
    [
      "NUL in an unknown attribute's key",
      () => scim(t, c, "POST", "/Users", { userName: "z@example.com", "odd\u0000key": 1 }),
      "odd",
      "NUL",
    ],
    [
      "NUL in a PUT",
      () => scim(t, c, "PUT", `/Users/${userId}`, { userName: "kept@example.com", displayName: "\u0000" }),
      "displayName",
      "NUL",
    ],
    [
      "NUL in a PATCH value",
      () => patchUser([{ op: "replace", path: "displayName", value: "a\u0000" }]),
      "Operations[0].value",
      "NUL",
    ],
    [
      "NUL in a PATCH path",
      () => patchUser([{ op: "replace", path: "display\u0000Name", value: "a" }]),
      "Operations[0].path",
      "NUL",
    ],
    [
      "a surrogate in a group displayName",
      () => scim(t, c, "POST", "/Groups", { displayName: "g\ud83d" }),
      "displayName",
      "surrogate",
    ],
    [
      "NUL in a group PATCH",
      () =>
        scim(t, c, "PATCH", `/Groups/${groupId}`, {
          schemas: [PATCH_OP],
          Operations: [{ op: "replace", path: "externalId", value: "\u0000" }],
        }),
      "Operations[0].value",
      "NUL",
    ],
    [
      "NUL in a filter value (percent-encoded)",
      () => scim(t, c, "GET", "/Users?filter=userName%20eq%20%22a%00%22"),
      "filter",
      "NUL",
    ],
    ["NUL in attributes", () => scim(t, c, "GET", "/Users?attributes=%00"), "attributes", "NUL"],
    ["NUL in a cursor", () => scim(t, c, "GET", "/Groups?cursor=%00"), "cursor", "NUL"],
  ])("%s: 400 invalidValue naming where", async (_name, send, where, what) => {
    const before = await totals();
    const body = expectRefused(await send());
    expect((body as { scimType?: string }).scimType).toBe("invalidValue");
    expect(body.detail).toContain(where);
    expect(body.detail).toContain(what);
    expect(await totals()).toEqual(before);
  });

  it.each([
    ["NUL", 'userName eq "a\\u0000"'],
    ["a lone surrogate", 'externalId eq "\\udfff"'],
  ])("%s in a filter's JSON string escape: 400 invalidFilter", async (_name, filter) => {
    const body = expectRefused(await scim(t, c, "GET", `/Users?filter=${encodeURIComponent(filter)}`));
    expect(body).toMatchObject({ scimType: "invalidFilter" });
    expect(body.detail).toContain("cannot be stored");
  });

  it("keeps a valid surrogate pair (an emoji) and the characters around NUL's neighbours", async () => {
    const res = await scim(t, c, "POST", "/Users", { userName: "emoji😀\u0001@example.com" });
    expect(res.statusCode).toBe(201);
    expect(res.json().userName).toBe("emoji😀\u0001@example.com");
  });

  it("an unauthenticated GET /scim/%00/v2/Users is a SCIM 404, not a 500", async () => {
    const res = await t.request({ method: "GET", url: "/scim/%00/v2/Users" });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ schemas: [ERROR_SCHEMA], status: "404", detail: "SCIM client not found" });
  });
});

describe("values too long for an index answer 400 naming the attribute and the limit", () => {
  const long = incompressible(10_000);
  it.each([
    ["userName", () => scim(t, c, "POST", "/Users", { userName: long }), "userName"],
    [
      "an email",
      () => scim(t, c, "POST", "/Users", { userName: "e@example.com", emails: [{ value: long }] }),
      "emails.value",
    ],
    [
      "a user's externalId",
      () => scim(t, c, "POST", "/Users", { userName: "x1@example.com", externalId: long }),
      "externalId",
    ],
    [
      "a user's displayName",
      () => scim(t, c, "POST", "/Users", { userName: "x2@example.com", displayName: long }),
      "displayName",
    ],
    [
      "employeeNumber",
      () => scim(t, c, "POST", "/Users", { userName: "x3@example.com", [ENTERPRISE_SCHEMA]: { employeeNumber: long } }),
      "employeeNumber",
    ],
    ["userName through PATCH", () => patchUser([{ op: "replace", path: "userName", value: long }]), "userName"],
    ["userName through PUT", () => scim(t, c, "PUT", `/Users/${userId}`, { userName: long }), "userName"],
    ["a group's displayName", () => scim(t, c, "POST", "/Groups", { displayName: long }), "displayName"],
    [
      "a group's externalId",
      () => scim(t, c, "POST", "/Groups", { displayName: "ok", externalId: long }),
      "externalId",
    ],
    [
      "a group's externalId through PATCH",
      () =>
        scim(t, c, "PATCH", `/Groups/${groupId}`, {
          schemas: [PATCH_OP],
          Operations: [{ op: "replace", path: "externalId", value: long }],
        }),
      "externalId",
    ],
  ])("%s of 10 000 characters", async (_name, send, attribute) => {
    const before = await totals();
    const body = expectRefused(await send());
    expect(body.detail).toContain(attribute);
    expect(body.detail).toContain(`at most ${MAX_USER_NAME_LENGTH} characters`);
    expect(await totals()).toEqual(before);
  });

  it("accepts the limit itself, in 4-byte characters, and reads it back", async () => {
    const userName = "𝕏".repeat(MAX_USER_NAME_LENGTH);
    const created = await scim(t, c, "POST", "/Users", {
      userName,
      externalId: "𝕐".repeat(512),
      emails: [{ value: "𝕫".repeat(512) }],
    });
    expect(created.statusCode, created.body).toBe(201);
    const found = await scim(t, c, "GET", `/Users/${created.json().id}`);
    expect(found.json().userName).toBe(userName);
    const group = await scim(t, c, "POST", "/Groups", {
      displayName: incompressible(512),
      externalId: incompressible(512),
    });
    expect(group.statusCode, group.body).toBe(201);
  });

  it("one character over the limit is refused", async () => {
    const body = expectRefused(await scim(t, c, "POST", "/Users", { userName: "𝕏".repeat(MAX_USER_NAME_LENGTH + 1) }));
    expect(body.detail).toBe(
      `userName: must be at most ${MAX_USER_NAME_LENGTH} characters (got ${MAX_USER_NAME_LENGTH + 1})`,
    );
  });

  it("advertises each limit in /Schemas, in the attribute's description (RFC 7643 has no key for it)", async () => {
    const schemas = (await scim(t, c, "GET", "/Schemas")).json().Resources as {
      id: string;
      attributes: { name: string; description: string }[];
    }[];
    const user = schemas.find((s) => s.id.endsWith("core:2.0:User"));
    const userName = user?.attributes.find((a) => a.name === "userName");
    expect(userName?.description).toContain(`At most ${MAX_USER_NAME_LENGTH} characters.`);
    expect(JSON.stringify(schemas)).not.toContain("maxLength");
  });
});

describe("nesting deeper than the limit is 400, never a stack overflow", () => {
  const nested = (depth: number, leaf: string, wrap: (inner: string) => string) => {
    let text = leaf;
    for (let i = 0; i < depth; i++) text = wrap(text);
    return text;
  };
  it.each([
    [
      "members 10 000 arrays deep",
      "/Groups",
      "POST",
      `{"displayName":"deep","members":${nested(10_000, "[]", (s) => `[${s}]`)}}`,
    ],
    [
      "a member 10 000 objects deep",
      "/Groups",
      "POST",
      `{"displayName":"deep","members":[${nested(10_000, "{}", (s) => `{"value":${s}}`)}]}`,
    ],
    [
      "a user attribute 100 000 deep",
      "/Users",
      "POST",
      `{"userName":"d@example.com","name":${nested(100_000, "1", (s) => `[${s}]`)}}`,
    ],
    [
      "a PATCH value 5 000 deep",
      "/Users/:id",
      "PATCH",
      `{"schemas":["${PATCH_OP}"],"Operations":[{"op":"add","value":${nested(5000, "{}", (s) => `{"a":${s}}`)}}]}`,
    ],
  ])("%s", async (_name, path, method, payload) => {
    const res = await t.request({
      method: method as "POST" | "PATCH",
      url: `${c.base}${path.replace(":id", userId)}`,
      headers: c.headers,
      payload,
    });
    const body = expectRefused(res);
    expect(body.detail).toContain(`nested more than ${MAX_JSON_DEPTH} levels deep`);
  });

  it("accepts the nesting real bodies have", async () => {
    const res = await patchUser([{ op: "add", value: { [ENTERPRISE_SCHEMA]: { manager: { value: userId } } } }]);
    expect(res.statusCode, res.body).toBe(200);
  });
});
