import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { adminCall, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { ENTERPRISE_SCHEMA, PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";

/** Per-client JSONata mapping SCIM user → identity traits. */
const CUSTOM = `{"login": $lowercase(userName), "dept": \`${ENTERPRISE_SCHEMA}\`.department}`;
let t: TestApp;
let server: Server;
let baseUrl = "";
let hits = 0;
let dir = "";
let n = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "roster-mapping-"));
  // The scripts' directory and the local script server, allowed explicitly (docs/decisions.md "Mapping sandbox").
  t = await createTestApp({ extra: { mappingSources: { dir, urlAllow: ["127.0.0.1"] } } });
  server = createServer((req, res) => {
    hits++;
    if (req.url === "/mapping.jsonata") res.end(CUSTOM);
    else if (req.url === "/huge") res.end(`"${"x".repeat(300 * 1024)}"`);
    else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await t.close();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

async function traitsOf(client: SeededClient, body: Record<string, unknown> = {}) {
  const res = await scim(t, client, "POST", "/Users", {
    schemas: [USER_SCHEMA],
    userName: `Map${++n}@Example.com`,
    ...body,
  });
  expect(res.statusCode).toBe(201);
  return (await adminCall(t, "GET", `/identities/${res.json().id}`)).json().traits;
}

describe("the default mapping", () => {
  it("produces {username, email, name}", async () => {
    const c = await seedClient(t);
    const traits = await traitsOf(c, {
      name: { givenName: "Ann", familyName: "Lee", formatted: "Ann Lee" },
      emails: [{ value: "other@example.com" }, { value: "primary@example.com", primary: true }],
    });
    expect(traits).toEqual({
      username: `Map${n}@Example.com`,
      email: "primary@example.com",
      name: { first: "Ann", last: "Lee", formatted: "Ann Lee" },
    });
  });

  it("leaves out what the user lacks", async () => {
    const c = await seedClient(t);
    expect(await traitsOf(c)).toEqual({ username: `Map${n}@Example.com`, name: {} });
  });
});

describe("mapping sources", () => {
  const department = { [ENTERPRISE_SCHEMA]: { department: "R&D" } };

  it("inline JSONata", async () => {
    const c = await seedClient(t, { mapping: CUSTOM });
    expect(await traitsOf(c, department)).toEqual({ login: `map${n}@example.com`, dept: "R&D" });
  });

  it("base64://", async () => {
    const c = await seedClient(t, { mapping: `base64://${Buffer.from(CUSTOM).toString("base64")}` });
    expect(await traitsOf(c, department)).toEqual({ login: `map${n}@example.com`, dept: "R&D" });
  });

  it("file://", async () => {
    const file = join(dir, "mapping.jsonata");
    writeFileSync(file, CUSTOM);
    const c = await seedClient(t, { mapping: pathToFileURL(file).href });
    expect(await traitsOf(c, department)).toEqual({ login: `map${n}@example.com`, dept: "R&D" });
  });

  it("http://, fetched once and cached", async () => {
    const c = await seedClient(t, { mapping: `${baseUrl}/mapping.jsonata` });
    const before = hits;
    expect(await traitsOf(c, department)).toEqual({ login: `map${n}@example.com`, dept: "R&D" });
    await traitsOf(c);
    expect(hits - before).toBe(1);
  });
});

describe("a failing mapping is a 500 and writes nothing", () => {
  it.each([
    ["an evaluation error", () => '$error("boom")'],
    ["unbounded recursion (depth limit)", () => "($f := function($x) { $f($x) + 1 }; $f(1))"],
    ["a script URL that answers 404", () => `${baseUrl}/missing`],
    ["a script larger than the size bound", () => `${baseUrl}/huge`],
    ["a non-object result", () => '"just a string"'],
  ])("%s", async (_name, mapping) => {
    const c = await seedClient(t, { mapping: mapping() });
    const userName = `fail${++n}@example.com`;
    const res = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName });
    expect(res.statusCode).toBe(500);
    expect(res.json().detail).toMatch(/^data mapping failed: /);
    expect(res.json().detail).not.toMatch(/\n\s+at /);
    const rows = await t.db.selectFrom("identities").select("id").where("user_name", "=", userName).execute();
    expect(rows).toHaveLength(0);
  });

  it("on PATCH too: the user stays as it was", async () => {
    const c = await seedClient(t, { mapping: 'title = "boom" ? $error("boom") : {}' });
    const user = (
      await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: `pf${++n}@example.com` })
    ).json();
    const res = await scim(t, c, "PATCH", `/Users/${user.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "title", value: "boom" }],
    });
    expect(res.statusCode).toBe(500);
    expect((await scim(t, c, "GET", `/Users/${user.id}`)).json().title).toBeUndefined();
  });
});

describe("POST /v2alpha1/admin/scimClients/{client_id}:testMapping", () => {
  it("answers the traits the client's mapping would produce, storing nothing", async () => {
    const c = await seedClient(t, { mapping: CUSTOM });
    const res = await adminCall(t, "POST", `/scimClients/${c.clientId}:testMapping`, {
      user: { userName: "Probe@Example.com", [ENTERPRISE_SCHEMA]: { department: "Ops" } },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ traits: { login: "probe@example.com", dept: "Ops" } });
    const rows = await t.db
      .selectFrom("identities")
      .select("id")
      .where("user_name", "=", "Probe@Example.com")
      .execute();
    expect(rows).toHaveLength(0);
  });

  it("tries a mapping given in the body instead", async () => {
    const c = await seedClient(t);
    const res = await adminCall(t, "POST", `/scimClients/${c.clientId}:testMapping`, {
      user: { userName: "a@example.com" },
      mapping: '{"u": $uppercase(userName)}',
    });
    expect(res.json()).toEqual({ traits: { u: "A@EXAMPLE.COM" } });
  });

  it("answers the error of a failing mapping, an invalid user, or an unknown client", async () => {
    const c = await seedClient(t, { mapping: '$error("boom")' });
    const failed = await adminCall(t, "POST", `/scimClients/${c.clientId}:testMapping`, {
      user: { userName: "a@b.c" },
    });
    expect(failed.statusCode).toBe(400);
    expect(failed.json().error.message).toMatch(/^data mapping failed: .*boom/);
    const invalid = await adminCall(t, "POST", `/scimClients/${c.clientId}:testMapping`, { user: { userName: "" } });
    expect(invalid.statusCode).toBe(400);
    const unknown = await adminCall(t, "POST", "/scimClients/nope:testMapping", { user: { userName: "a@b.c" } });
    expect(unknown.statusCode).toBe(404);
  });
});
