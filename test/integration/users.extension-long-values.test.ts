import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CONTOSO_EXTENSION, CONTOSO_GROUP_EXTENSION, CONTOSO_GROUP_URN, CONTOSO_URN } from "../helpers/extensions.js";
import { adminCall, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * Filterable and unique extension values of any length: the index holds their digest, so a long value is stored,
 * found by eq and kept unique like a short one (a B-tree entry of the value itself failed past ~2 700 bytes with
 * SQLSTATE 54000, while a long but compressible value passed).
 */
const { t } = useTestApp();

/** 2 700 characters that do not compress: the value that used to be refused. */
const random = (length: number) => randomBytes(length).toString("base64").slice(0, length);
let n = 0;
const userWith = (c: SeededClient, values: Record<string, string>) =>
  scim(t, c, "POST", "/Users", { userName: `long${++n}@contoso.example`, [CONTOSO_URN]: values });
const found = async (c: SeededClient, expression: string) => {
  const res = await scim(t, c, "GET", `/Users?filter=${encodeURIComponent(expression)}`);
  expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
  return (res.json().Resources ?? []).map((u: { id: string }) => u.id);
};

describe("long values of filterable and unique extension attributes", () => {
  it("2 700 random characters are stored and unique; a filter that long is refused by the filter's own limit", async () => {
    const c = await seedClient(t, { extensions: [CONTOSO_EXTENSION] });
    const badge = random(2_700);
    const code = random(2_700);
    const created = await userWith(c, { employeeBadge: badge, costCenterCode: code });
    expect(created.statusCode, created.body.slice(0, 300)).toBe(201);
    expect(created.json()[CONTOSO_URN].employeeBadge).toBe(badge);
    // A filter is at most 1 024 bytes (the filter grammar's limit): a value that long cannot be asked for by eq.
    const long = await scim(t, c, "GET", `/Users?filter=${encodeURIComponent(`costCenterCode eq "${code}"`)}`);
    expect(long.statusCode).toBe(400);
    expect(long.json().scimType).toBe("invalidFilter");
    expect(long.json().detail).toMatch(/longer than 1024 bytes/);
    const clash = await userWith(c, { employeeBadge: badge.toLowerCase() });
    expect(clash.statusCode).toBe(409);
    expect(clash.json().scimType).toBe("uniqueness");
    // A value sharing the first 2 699 characters is another value.
    expect((await userWith(c, { employeeBadge: `${badge.slice(0, -1)}~` })).statusCode).toBe(201);
  });

  it("a value as long as a filter can carry is found by eq, in any case unless caseExact", async () => {
    const c = await seedClient(t, { extensions: [CONTOSO_EXTENSION] });
    const code = random(990);
    const id = (await userWith(c, { costCenterCode: code })).json().id;
    expect(await found(c, `costCenterCode eq "${code.toUpperCase()}"`)).toEqual([id]);
    expect(await found(c, `costCenterCode eq "${code.slice(1)}"`)).toEqual([]);
  });

  it("100 000 repeated characters are stored and unique, as before", async () => {
    const c = await seedClient(t, { extensions: [CONTOSO_EXTENSION] });
    const badge = "x".repeat(100_000);
    const created = await userWith(c, { employeeBadge: badge });
    expect(created.statusCode).toBe(201);
    expect((await userWith(c, { employeeBadge: badge })).statusCode).toBe(409);
    expect((await userWith(c, { employeeBadge: `${badge}y` })).statusCode).toBe(201);
  });

  it("making an attribute filterable and unique indexes the long values users already hold", async () => {
    const quiet = {
      ...CONTOSO_EXTENSION,
      attributes: CONTOSO_EXTENSION.attributes.map(({ filterable: _f, uniqueness: _u, ...rest }) => rest),
    };
    const c = await seedClient(t, { extensions: [quiet] });
    const badge = random(5_000);
    const code = random(990);
    const id = (await userWith(c, { costCenterCode: code, employeeBadge: badge })).json().id;
    expect((await userWith(c, { employeeBadge: random(3_000) })).statusCode).toBe(201);
    const patched = await adminCall(t, "PATCH", `/scimClients/${c.clientId}?update_mask=extensions`, {
      extensions: [CONTOSO_EXTENSION],
    });
    expect(patched.statusCode, patched.body.slice(0, 300)).toBe(200);
    expect(await found(c, `costCenterCode eq "${code}"`)).toEqual([id]);
    expect((await userWith(c, { employeeBadge: badge })).statusCode).toBe(409);
  });

  it("a Group extension value of 2 700 random characters is unique; a shorter one is found by eq", async () => {
    const c = await seedClient(t, { extensions: [CONTOSO_GROUP_EXTENSION] });
    const group = (name: string, groupCode: string) =>
      scim(t, c, "POST", "/Groups", { displayName: name, [CONTOSO_GROUP_URN]: { groupCode } });
    const groupCode = random(2_700);
    const first = await group("A", groupCode);
    expect(first.statusCode, first.body.slice(0, 300)).toBe(201);
    expect((await group("B", groupCode)).statusCode).toBe(409);
    const short = random(990);
    const second = (await group("C", short)).json().id;
    const res = await scim(t, c, "GET", `/Groups?filter=${encodeURIComponent(`groupCode eq "${short}"`)}`);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(res.json().Resources.map((g: { id: string }) => g.id)).toEqual([second]);
  });
});
