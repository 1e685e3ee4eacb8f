import { beforeAll, describe, expect, it } from "vitest";
import { OKTA_EXTENSION, OKTA_URN } from "../helpers/extensions.js";
import {
  type FilterDirectory,
  type FilterGroup,
  type FilterUser,
  seedFilterDirectory,
} from "../helpers/filter-directory.js";
import { clientIn, scim } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

/** Every filter operator and combination of RFC 7644 §3.4.2.2 on /Users and /Groups, with the case rules. */
const { t, c } = useTestApp({ seed: true });
let d: FilterDirectory;

beforeAll(async () => {
  d = await seedFilterDirectory(t, c);
  // zed was changed last, long after the others.
  await t.db
    .updateTable("identities")
    .set({ updated_at: new Date("2031-01-01T00:00:00Z"), modified_hour: new Date("2031-01-01T00:00:00Z") })
    .where("id", "=", d.users.zed)
    .execute();
});

const get = (path: string, f: string, extra = "") =>
  scim(t, c, "GET", `${path}?filter=${encodeURIComponent(f)}${extra}`);
const idsOf = (body: { Resources?: { id: string }[] }) => (body.Resources ?? []).map((r) => r.id).sort();

/** A filter's value may name a fixture id: `{u:jsmith}`, `{g:tours}`. */
const expand = (f: string) =>
  f
    .replace(/\{u:(\w+)\}/g, (_m, k: FilterUser) => d.users[k])
    .replace(/\{g:(\w+)\}/g, (_m, k: FilterGroup) => d.groups[k]);

describe("filters on /Users", () => {
  it.each<[string, FilterUser[]]>([
    ['userName eq "BJENSEN@example.com"', ["bjensen"]],
    ['userName ne "bjensen@example.com"', ["jsmith", "ada", "zed"]],
    ['userName co "EXAMPLE.COM"', ["bjensen", "jsmith", "ada"]],
    ['userName sw "ada"', ["ada"]],
    ['userName ew ".ORG"', ["zed"]],
    ['userName gt "c"', ["jsmith", "zed"]],
    ['userName le "bjensen@example.com"', ["bjensen", "ada"]],
    ["title pr", ["bjensen", "jsmith", "ada"]],
    ["not (title pr)", ["zed"]],
    ['title eq "ENGINEER"', ["jsmith", "ada"]],
    ['externalId eq "bj-1"', []],
    ['externalId eq "BJ-1"', ["bjensen"]],
    ['externalId sw "A"', ["ada"]],
    ['name.familyName eq "jensen"', ["bjensen"]],
    ['name.givenName pr and not (name.familyName eq "Smith")', ["bjensen"]],
    ['emails.value eq "JOHN.SMITH@work.example"', ["jsmith"]],
    ['emails[type eq "work"].value eq "bjensen@example.com"', ["bjensen"]],
    ['emails[type eq "work"].value eq "babs@jensen.org"', []],
    ['emails[type eq "work" and primary eq true]', ["bjensen"]],
    ['emails[type eq "other"] or title eq "Tour Guide"', ["bjensen", "zed"]],
    ['emails co "JENSEN"', ["bjensen"]],
    ["emails pr", ["bjensen", "jsmith", "zed"]],
    ["active eq false", ["jsmith"]],
    ["active eq true and title pr", ["bjensen", "ada"]],
    ['urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "tours"', ["bjensen"]],
    ['employeeNumber eq "701984"', ["bjensen"]],
    ['groups.value eq "{g:engineering}"', ["jsmith", "ada"]],
    ['groups eq "{g:tours}"', ["bjensen"]],
    ["groups pr", ["bjensen", "jsmith", "ada"]],
    ['meta.lastModified gt "2030-01-01T00:00:00Z"', ["zed"]],
    ['meta.lastModified le "2030-01-01T00:00:00+01:00"', ["bjensen", "jsmith", "ada"]],
    // zed was changed at 2031-01-01T00:00:00Z, on an hour's edge: the index holds hours, the exact time decides.
    ['meta.lastModified ge "2031-01-01T00:00:00Z"', ["zed"]],
    ['meta.lastModified gt "2031-01-01T00:00:00Z"', []],
    ['meta.lastModified gt "2030-12-31T23:59:59.999Z"', ["zed"]],
    ['meta.lastModified lt "2031-01-01T00:00:00Z"', ["bjensen", "jsmith", "ada"]],
    ['meta.lastModified lt "2031-01-01T00:00:00.001Z"', ["bjensen", "jsmith", "ada", "zed"]],
    ['meta.lastModified eq "2031-01-01T01:00:00+01:00"', ["zed"]],
    ['meta.lastModified eq "2031-01-01T00:59:59Z"', []],
    ['not (meta.lastModified ge "2031-01-01T00:30:00Z")', ["bjensen", "jsmith", "ada", "zed"]],
    ['(userName sw "a" or userName sw "b") and not (emails pr)', ["ada"]],
    [
      'userName eq "ada@example.com" or userName eq "zed@example.org" or externalId eq "js-2"',
      ["ada", "zed", "jsmith"],
    ],
    ['id eq "{u:jsmith}"', ["jsmith"]],
    ['id eq "not-a-uuid"', []],
    ['meta.resourceType eq "User"', ["bjensen", "jsmith", "ada", "zed"]],
  ])("%s", async (f, expected) => {
    const res = await get("/Users", expand(f));
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(idsOf(body)).toEqual(expected.map((k) => d.users[k]).sort());
    expect(body.totalResults).toBe(expected.length);
  });

  it("Entra ID's work-email matching filter finds the user", async () => {
    const f = 'emails[type eq "work"].value eq "John.Smith@Work.Example"';
    const body = (await get("/Users", f, "&startIndex=1&count=100")).json();
    expect(idsOf(body)).toEqual([d.users.jsmith]);
  });

  it("filtered offset pages are exact: totalResults counts every match, pages do not overlap", async () => {
    const f = 'userName co "example"';
    const first = (await get("/Users", f, "&startIndex=1&count=2")).json();
    const second = (await get("/Users", f, "&startIndex=3&count=2")).json();
    expect([first.totalResults, second.totalResults]).toEqual([4, 4]);
    expect(new Set([...idsOf(first), ...idsOf(second)]).size).toBe(4);
  });

  it("filtered cursor pages walk every match once", async () => {
    const seen: string[] = [];
    let cursor = "";
    for (let i = 0; i < 5; i++) {
      const body = (await get("/Users", "title pr or emails pr", `&count=1&cursor=${cursor}`)).json();
      seen.push(...idsOf(body));
      if (body.nextCursor === undefined) break;
      cursor = body.nextCursor;
    }
    expect(seen.sort()).toEqual(Object.values(d.users).sort());
  });
});

describe("filters on /Groups", () => {
  it.each<[string, FilterGroup[]]>([
    ['displayName co "TOUR"', ["tours", "night"]],
    ['displayName eq "engineering"', ["engineering"]],
    ['displayName sw "N" or displayName ew "ing"', ["night", "engineering"]],
    ['members eq "{g:night}"', ["tours"]],
    ['members[value eq "{u:bjensen}"]', ["tours"]],
    ['members.value eq "{u:ada}"', ["engineering"]],
    ["members pr", ["engineering", "tours"]],
    ["not (members pr)", ["night"]],
    ['externalId eq "eng"', ["engineering"]],
    ['externalId eq "ENG"', []],
    ["externalId pr", ["engineering"]],
    ['meta.lastModified gt "2000-01-01T00:00:00Z"', ["engineering", "tours", "night"]],
  ])("%s", async (f, expected) => {
    const res = await get("/Groups", expand(f), "&excludedAttributes=members");
    expect(res.statusCode, res.body).toBe(200);
    expect(idsOf(res.json())).toEqual(expected.map((k) => d.groups[k]).sort());
  });

  it("Entra ID's last-member check answers the group with its id only, or nothing", async () => {
    const check = (user: FilterUser) =>
      get("/Groups", `id eq "${d.groups.engineering}" and members eq "${d.users[user]}"`, "&attributes=id");
    const member = await check("jsmith");
    expect(member.statusCode, member.body).toBe(200);
    expect(member.json().Resources).toEqual([
      { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], id: d.groups.engineering },
    ]);
    expect((await check("bjensen")).json()).toMatchObject({ totalResults: 0, Resources: [] });
  });

  it("a valid filter on an attribute that is not filterable is 400 invalidFilter naming what is, never a list", async () => {
    for (const f of ['members.display eq "Engineering"', 'members[type eq "User"]']) {
      const res = await get("/Groups", f);
      expect(res.statusCode, f).toBe(400);
      expect(res.json()).toMatchObject({ scimType: "invalidFilter" });
      expect(res.json().detail).toContain("filterable attributes of Group: displayName, members.value");
    }
  });

  it("members co compares member ids as text (evaluated by PostgreSQL)", async () => {
    const prefix = d.users.ada.slice(0, 30);
    const res = await get("/Groups", `members co "${prefix}"`, "&excludedAttributes=members");
    expect(idsOf(res.json())).toContain(d.groups.engineering);
  });
});

describe("filters on declared extension attributes", () => {
  it("filterable ones take every operator, case-insensitively unless caseExact; others stay invalidFilter", async () => {
    const okta = await clientIn(t, c.organizationId, { extensions: [OKTA_EXTENSION] });
    const make = async (userName: string, costCode: string, badgeId: string) =>
      (await scim(t, okta, "POST", "/Users", { userName, [OKTA_URN]: { costCode, badgeId } })).json().id as string;
    const a = await make("ext-a@example.com", "CC-100", "Badge-1");
    const b = await make("ext-b@example.com", "cc-200", "badge-2");
    const found = async (f: string) => {
      const res = await scim(t, okta, "GET", `/Users?filter=${encodeURIComponent(f)}`);
      expect(res.statusCode, res.body).toBe(200);
      return idsOf(res.json());
    };
    expect(await found('costCode eq "cc-100"')).toEqual([a]);
    expect(await found('costCode co "C-"')).toEqual([a, b].sort());
    expect(await found(`${OKTA_URN}:costCode sw "cc-2"`)).toEqual([b]);
    expect(await found('costCode gt "CC-150" and userName sw "ext-"')).toEqual([b]);
    expect(await found('badgeId eq "badge-1"')).toEqual([]);
    expect(await found('badgeId eq "Badge-1"')).toEqual([a]);
    expect(await found('badgeId sw "b"')).toEqual([b]);
    expect(await found('not (costCode pr) and userName sw "ext-"')).toEqual([]);
    const refused = await scim(t, okta, "GET", `/Users?filter=${encodeURIComponent("level gt 3")}`);
    expect(refused.json()).toMatchObject({ scimType: "invalidFilter" });
  });
});
