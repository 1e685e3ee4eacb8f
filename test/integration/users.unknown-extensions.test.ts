import { beforeAll, describe, expect, it } from "vitest";
import { OKTA_EXTENSION, OKTA_URN } from "../helpers/extensions.js";
import { type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/** An undeclared schema URN: 400 by default; kept verbatim with unknown_extensions "store". */
const EXTRA = "urn:example:extra:1.0:User";
const { t } = useTestApp();
let strict: SeededClient;
let storing: SeededClient;

beforeAll(async () => {
  strict = await seedClient(t, { extensions: [OKTA_EXTENSION] });
  storing = await seedClient(t, { extensions: [OKTA_EXTENSION], unknown_extensions: "store" });
});

describe("undeclared extensions", () => {
  it("answer 400 by default, as an object or as a URN-qualified attribute", async () => {
    for (const body of [
      { userName: "u1@acme.example", [EXTRA]: { anything: 1 } },
      { userName: "u1@acme.example", [`${EXTRA}:anything`]: 1 },
    ]) {
      const res = await scim(t, strict, "POST", "/Users", body);
      expect(res.statusCode).toBe(400);
      expect(res.json().detail).toMatch(/unsupported schema/);
    }
    const plain = await seedClient(t);
    const res = await scim(t, plain, "POST", "/Users", { userName: "u1@acme.example", [OKTA_URN]: { costCode: "1" } });
    expect(res.statusCode).toBe(400);
  });

  it("are kept verbatim with the escape hatch: not validated, returned, listed in schemas", async () => {
    const extra = { anything: 1, nested: { deep: [true, "x"] }, Mixed_Case: null };
    const res = await scim(t, storing, "POST", "/Users", {
      userName: "kept1@acme.example",
      [OKTA_URN]: { costCode: "CC-1" },
      [EXTRA]: extra,
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().schemas).toEqual([USER_SCHEMA, OKTA_URN, EXTRA]);
    expect(res.json()[EXTRA]).toEqual(extra);
    const read = await scim(t, storing, "GET", `/Users/${res.json().id}`);
    expect(read.json()).toEqual(res.json());
    // Declared extensions are still validated.
    const bad = await scim(t, storing, "POST", "/Users", {
      userName: "kept2@acme.example",
      [OKTA_URN]: { level: "x" },
    });
    expect(bad.statusCode).toBe(400);
  });

  it("PATCH edits the kept object as sent; PUT without it drops it", async () => {
    const id = (await scim(t, storing, "POST", "/Users", { userName: "kept3@acme.example", [EXTRA]: { a: 1 } })).json()
      .id;
    const patched = await scim(t, storing, "PATCH", `/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: "add", path: `${EXTRA}:b`, value: { free: "form" } },
        { op: "Replace", value: { [`${EXTRA}:a`]: 2 } },
      ],
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()[EXTRA]).toEqual({ a: 2, b: { free: "form" } });
    const removed = await scim(t, storing, "PATCH", `/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "remove", path: EXTRA }],
    });
    expect(removed.json()[EXTRA]).toBeUndefined();
    expect(removed.json().schemas).toEqual([USER_SCHEMA]);
    await scim(t, storing, "PUT", `/Users/${id}`, { userName: "kept3@acme.example", [EXTRA]: { c: 3 } });
    const put = await scim(t, storing, "PUT", `/Users/${id}`, { userName: "kept3@acme.example" });
    expect(put.json()[EXTRA]).toBeUndefined();
  });

  it("are not filterable", async () => {
    const res = await scim(t, storing, "GET", `/Users?filter=${encodeURIComponent(`${EXTRA}:anything eq "1"`)}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidFilter");
  });
});
