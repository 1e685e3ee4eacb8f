import { describe, expect, it } from "vitest";
import { PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { secretsExtension } from "../helpers/extensions.js";
import { useTestApp } from "../helpers/suite.js";
import { adminCall, type SeededClient, scim, seedClient } from "../helpers/seed.js";

/**
 * The request log keeps no secret a SCIM client sent, however the body spells it: secrets are found by what the
 * PATCH engine and the client's schema make of a body, not by exact key names.
 */
const EXT = "urn:example:vault:1.0:User";
const EXTENSION = secretsExtension(EXT, "VaultUser", "pin");
const CORE_PASSWORD = `${USER_SCHEMA}:password`;

let n = 0;

const o = useTestApp({ observed: true });

async function createUser(c: SeededClient): Promise<string> {
  const res = await scim(o.t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: `redact${++n}@example.com` });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

/** Every stored entry of a client, in full, as the admin API answers them (list and detail). */
async function storedText(c: SeededClient): Promise<string> {
  await o.obs.writer.flush();
  const list = await adminCall(o.t, "GET", `/scimClients/${c.clientId}/requests`);
  expect(list.statusCode, list.body).toBe(200);
  const details = await Promise.all(
    (list.json().requests as Array<{ id: string }>).map(
      async (e) => (await adminCall(o.t, "GET", `/scimClients/${c.clientId}/requests/${e.id}`)).body,
    ),
  );
  return list.body + details.join("\n");
}

const patch = (c: SeededClient, id: string, operations: unknown[]) =>
  scim(o.t, c, "PATCH", `/Users/${id}`, { schemas: [PATCH_OP], Operations: operations });

describe("request log redaction by meaning", () => {
  it("a failing PATCH with `Value` keeps no password (errors mode)", async () => {
    const c = await seedClient(o.t);
    const id = await createUser(c);
    const res = await patch(c, id, [
      { op: "replace", path: "password", Value: "Hunter2" },
      { op: "replace", path: "userName", value: 42 },
    ]);
    expect(res.statusCode).toBe(400);
    const text = await storedText(c);
    expect(text).toContain('"Value":"[redacted]"');
    expect(text).not.toContain("Hunter2");
  });

  it.each([
    ["a trailing space in the path", { op: "replace", path: "password ", value: "Trailing-Pw-1" }, "Trailing-Pw-1"],
    ["upper-case keys and path", { OP: "replace", PATH: "PASSWORD", VALUE: "Upper-Pw-2" }, "Upper-Pw-2"],
    ["mixed-case keys", { Op: "Replace", Path: " Password\t", Value: "Mixed-Pw-3" }, "Mixed-Pw-3"],
    ["a URN-qualified path", { op: "replace", path: CORE_PASSWORD.toUpperCase(), value: "Urn-Pw-4" }, "Urn-Pw-4"],
    ["a path-less value", { op: "replace", value: { "PassWord ": "Pathless-Pw-5" } }, "Pathless-Pw-5"],
    ["a path-less URN key", { op: "add", value: { [CORE_PASSWORD]: "UrnKey-Pw-6" } }, "UrnKey-Pw-6"],
    ["a path-less core URN object", { op: "replace", path: USER_SCHEMA, value: { password: "Obj-Pw-7" } }, null],
  ])("a password really set through %s is not kept (all mode)", async (_what, operation, secret) => {
    const c = await seedClient(o.t, { request_log: "all" });
    const id = await createUser(c);
    const res = await patch(c, id, [operation]);
    if (secret !== null) expect(res.statusCode, res.body).toBe(200);
    const text = await storedText(c);
    expect(text).not.toContain(secret ?? "Obj-Pw-7");
    expect(text).toContain("[redacted]");
  });

  it("hides extension attributes declared `returned: never`, in every PATCH form, create and PUT", async () => {
    const c = await seedClient(o.t, { request_log: "all", extensions: [EXTENSION] });
    const created = await scim(o.t, c, "POST", "/Users", {
      schemas: [USER_SCHEMA, EXT],
      userName: `vault${++n}@example.com`,
      password: "Create-Pw-8",
      [EXT]: { pin: "1111-create", site: "kept-site", recovery: { code: "RC-create", hint: "kept-hint" } },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    const ops = [
      { op: "replace", path: `${EXT}:pin`, value: "2222-path" },
      { op: "replace", path: `${EXT.toUpperCase()}:PIN `, value: "3333-upper" },
      { op: "replace", value: { [EXT]: { PIN: "4444-urnkey", site: "kept-site-2" } } },
      { op: "replace", value: { [`${EXT}:recovery.code`]: "RC-dotted" } },
      { op: "replace", path: `${EXT}:recovery`, value: { code: "RC-complex", hint: "kept-hint-2" } },
      { op: "replace", path: EXT, value: { pin: "5555-extpath" } },
    ];
    for (const op of ops) {
      const res = await patch(c, id, [op]);
      expect(res.statusCode, `${JSON.stringify(op)} → ${res.body}`).toBe(200);
      // Returned never holds for sub-attributes too: the answer itself carries none of them.
      // Whole values: a bare "1111" may well be part of a random id or an ETag.
      expect(res.body).not.toMatch(/RC-|1111-create|2222-path|3333-upper|4444-urnkey|5555-extpath/);
    }
    const read = await scim(o.t, c, "GET", `/Users/${id}`);
    expect(read.json()[EXT]).toEqual({ site: "kept-site-2", recovery: { hint: "kept-hint-2" } });
    const put = await scim(o.t, c, "PUT", `/Users/${id}`, {
      schemas: [USER_SCHEMA, EXT],
      userName: `vault${n}@example.com`,
      [EXT]: { pin: "6666-put" },
    });
    expect(put.statusCode, put.body).toBe(200);
    const text = await storedText(c);
    const secrets = [
      "Create-Pw-8",
      "1111-create",
      "2222-path",
      "3333-upper",
      "4444-urnkey",
      "5555-extpath",
      "6666-put",
    ];
    for (const secret of [...secrets, "RC-"]) {
      expect(text).not.toContain(secret);
    }
    for (const kept of ["kept-site", "kept-site-2", "kept-hint", "kept-hint-2"]) expect(text).toContain(kept);
  });

  it("hides bulk forms, secret query parameters and a filter on a password", async () => {
    const c = await seedClient(o.t, { request_log: "all" });
    const bulk = await scim(o.t, c, "POST", "/Bulk", {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],
      Operations: [
        { method: "POST", path: "/Users", bulkId: "b1", data: { userName: "bulk@example.com", PASSWORD: "Bulk-Pw-9" } },
        {
          method: "PATCH",
          path: "/Users/x",
          data: { schemas: [PATCH_OP], Operations: [{ op: "replace", path: "password ", value: "Bulk-Pw-10" }] },
        },
      ],
    });
    expect(bulk.statusCode).toBeGreaterThanOrEqual(400);
    const query = await scim(
      o.t,
      c,
      "GET",
      `/Users?Access_Token=Query-Tok-11&filter=${encodeURIComponent('password eq "Filter-Pw-12"')}`,
    );
    expect(query.statusCode).toBeGreaterThanOrEqual(200);
    const text = await storedText(c);
    for (const secret of ["Bulk-Pw-9", "Bulk-Pw-10", "Query-Tok-11", "Filter-Pw-12"])
      expect(text).not.toContain(secret);
  });
});
