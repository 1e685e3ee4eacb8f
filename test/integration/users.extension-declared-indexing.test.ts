import { describe, expect, it } from "vitest";
import { CONTOSO_EXTENSION, CONTOSO_GROUP_EXTENSION, CONTOSO_GROUP_URN, CONTOSO_URN } from "../helpers/extensions.js";
import { adminCall, clientIn, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * Uniqueness and filterability hold from the first request: declaring a filterable or unique attribute, when a
 * client is created or by a PATCH of its declaration, indexes the values the organization's users (and groups)
 * already hold, or refuses with 409 naming the holders when those values already repeat.
 */
const { t } = useTestApp();

/** The Contoso extension with nothing indexed: what a first connection of the organization writes through. */
const quiet = (extension: { attributes: readonly Record<string, unknown>[] }) => ({
  ...extension,
  attributes: extension.attributes.map(({ filterable: _f, uniqueness: _u, ...rest }) => rest),
});
let n = 0;
const userWith = (c: SeededClient, values: Record<string, string>) =>
  scim(t, c, "POST", "/Users", { userName: `held${++n}@contoso.example`, [CONTOSO_URN]: values });
const filter = (c: SeededClient, expression: string) =>
  scim(t, c, "GET", `/Users?filter=${encodeURIComponent(expression)}`);
const ids = (res: { json: () => { Resources?: { id: string }[] } }) => (res.json().Resources ?? []).map((u) => u.id);

/** An organization whose users already hold Contoso values, written by a connection that indexes none of them. */
async function organizationWithValues(values: readonly Record<string, string>[]) {
  const first = await seedClient(t, { extensions: [quiet(CONTOSO_EXTENSION)] });
  const held: string[] = [];
  for (const v of values) {
    const res = await userWith(first, v);
    expect(res.statusCode, res.body).toBe(201);
    held.push(res.json().id);
  }
  return { first, held };
}

describe("a client created with filterable and unique attributes", () => {
  it("finds the users that already hold a value and refuses to repeat one, from its first request", async () => {
    const { first, held } = await organizationWithValues([
      { costCenterCode: "CC-1", employeeBadge: "EB-1" },
      { costCenterCode: "CC-2", employeeBadge: "EB-2" },
    ]);
    const second = await clientIn(t, first.organizationId, { extensions: [CONTOSO_EXTENSION] });
    const found = await filter(second, `${CONTOSO_URN}:costCenterCode eq "cc-1"`);
    expect(found.statusCode, found.body).toBe(200);
    expect(ids(found)).toEqual([held[0]]);
    expect(ids(await filter(second, 'employeeBadge eq "EB-2"'))).toEqual([held[1]]);
    const clash = await userWith(second, { employeeBadge: "eb-1" });
    expect(clash.statusCode, clash.body).toBe(409);
    expect(clash.json().scimType).toBe("uniqueness");
    expect((await userWith(second, { employeeBadge: "EB-3" })).statusCode).toBe(201);
  });

  it("is refused with 409 naming the users when their values already repeat, and is not created", async () => {
    const { first, held } = await organizationWithValues([
      { employeeBadge: "EB-dup" },
      { employeeBadge: "eb-DUP" },
      { employeeBadge: "EB-other" },
    ]);
    const res = await adminCall(t, "POST", "/scimClients", {
      organization_id: first.organizationId,
      client_id: "refused-unique",
      extensions: [CONTOSO_EXTENSION],
    });
    expect(res.statusCode, res.body).toBe(409);
    const { error } = res.json();
    expect(error.status).toBe("ALREADY_EXISTS");
    expect(error.message).toContain(`${CONTOSO_URN}:employeeBadge`);
    for (const id of held.slice(0, 2)) expect(error.message).toContain(id);
    expect(error.message).not.toContain(held[2]);
    expect(error.details).toEqual([
      { attribute: `${CONTOSO_URN}:employeeBadge`, resource: "User", ids: [...held.slice(0, 2)].sort() },
    ]);
    expect((await adminCall(t, "GET", "/scimClients/refused-unique")).statusCode).toBe(404);
    // A caseExact badge makes the two spellings two values: the same declaration is then accepted.
    const caseExact = {
      ...CONTOSO_EXTENSION,
      attributes: CONTOSO_EXTENSION.attributes.map((a) => (a.name === "employeeBadge" ? { ...a, caseExact: true } : a)),
    };
    const accepted = await adminCall(t, "POST", "/scimClients", {
      organization_id: first.organizationId,
      extensions: [caseExact],
    });
    expect(accepted.statusCode, accepted.body).toBe(201);
  });

  it("indexes the groups that already hold a value, and refuses repeated group values the same way", async () => {
    const first = await seedClient(t, { extensions: [quiet(CONTOSO_GROUP_EXTENSION)] });
    const group = (name: string, code: string) =>
      scim(t, first, "POST", "/Groups", { displayName: name, [CONTOSO_GROUP_URN]: { groupCode: code } });
    const a = (await group("A", "G-1")).json().id;
    const second = await clientIn(t, first.organizationId, { extensions: [CONTOSO_GROUP_EXTENSION] });
    const found = await scim(t, second, "GET", `/Groups?filter=${encodeURIComponent('groupCode eq "G-1"')}`);
    expect(ids(found)).toEqual([a]);
    const b = (await group("B", "G-1")).json().id;
    const res = await adminCall(t, "POST", "/scimClients", {
      organization_id: first.organizationId,
      extensions: [CONTOSO_GROUP_EXTENSION],
    });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().error.details).toEqual([
      { attribute: `${CONTOSO_GROUP_URN}:groupCode`, resource: "Group", ids: [a, b].sort() },
    ]);
  });
});

describe("two clients of one organization indexing the same attribute", () => {
  it("a new client that only filters on a value another client keeps unique leaves it unique", async () => {
    const unique = await seedClient(t, { extensions: [CONTOSO_EXTENSION] });
    expect((await userWith(unique, { employeeBadge: "EB-kept" })).statusCode).toBe(201);
    const filterOnly = {
      ...CONTOSO_EXTENSION,
      attributes: CONTOSO_EXTENSION.attributes.map(({ uniqueness: _u, ...a }) =>
        a.name === "employeeBadge" ? { ...a, filterable: true } : a,
      ),
    };
    const second = await clientIn(t, unique.organizationId, { extensions: [filterOnly] });
    expect((await filter(second, 'employeeBadge eq "EB-kept"')).json().totalResults).toBe(1);
    expect((await userWith(unique, { employeeBadge: "eb-kept" })).statusCode).toBe(409);
  });
});

describe("a PATCH of the declaration", () => {
  it("that makes an attribute unique while users repeat a value is 409 naming them, and changes nothing", async () => {
    const { first, held } = await organizationWithValues([{ employeeBadge: "EB-p" }, { employeeBadge: "EB-P" }]);
    const patch = await adminCall(t, "PATCH", `/scimClients/${first.clientId}?update_mask=extensions`, {
      extensions: [CONTOSO_EXTENSION],
    });
    expect(patch.statusCode, patch.body).toBe(409);
    expect(patch.json().error.message).toContain(`${CONTOSO_URN}:employeeBadge`);
    for (const id of held) expect(patch.json().error.message).toContain(id);
    const read = (await adminCall(t, "GET", `/scimClients/${first.clientId}`)).json();
    expect(read.extensions[0].attributes.some((a: { uniqueness: string }) => a.uniqueness === "server")).toBe(false);
    // Once one of them changes its value, the same PATCH is accepted and uniqueness holds at once.
    const fixed = await scim(t, first, "PUT", `/Users/${held[1]}`, {
      userName: (await scim(t, first, "GET", `/Users/${held[1]}`)).json().userName,
      [CONTOSO_URN]: { employeeBadge: "EB-q" },
    });
    expect(fixed.statusCode, fixed.body).toBe(200);
    const again = await adminCall(t, "PATCH", `/scimClients/${first.clientId}?update_mask=extensions`, {
      extensions: [CONTOSO_EXTENSION],
    });
    expect(again.statusCode, again.body).toBe(200);
    expect((await userWith(first, { employeeBadge: "eb-p" })).statusCode).toBe(409);
    expect(ids(await filter(first, 'employeeBadge eq "EB-Q"'))).toEqual([held[1]]);
  });
});
