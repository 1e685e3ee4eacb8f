import { ENTERPRISE_SCHEMA, USER_SCHEMA } from "./constants.js";
import type { TestApp } from "./app.js";
import { type SeededClient, scim } from "./seed.js";

/**
 * A small directory to filter and sort: four users whose attributes differ in case, presence and type, three groups
 * (Night Tours nested in Tours, and empty of users). Ids are keyed by a short name.
 */
export const FILTER_USERS = {
  bjensen: {
    userName: "bjensen@example.com",
    externalId: "BJ-1",
    title: "Tour Guide",
    active: true,
    name: { familyName: "Jensen", givenName: "Barbara" },
    emails: [
      { value: "bjensen@example.com", type: "work", primary: true },
      { value: "babs@jensen.org", type: "home" },
    ],
    [ENTERPRISE_SCHEMA]: { employeeNumber: "701984", department: "Tours" },
  },
  jsmith: {
    userName: "jsmith@example.com",
    externalId: "js-2",
    title: "Engineer",
    active: false,
    name: { familyName: "Smith", givenName: "John" },
    emails: [{ value: "John.Smith@Work.example", type: "work", primary: false }],
  },
  ada: { userName: "ADA@example.com", externalId: "AL-3", title: "engineer", name: { familyName: "Lovelace" } },
  zed: {
    userName: "zed@example.org",
    externalId: "z-4",
    emails: [{ value: "zed@example.org", type: "other" }],
    [ENTERPRISE_SCHEMA]: { department: "Ops" },
  },
} as const;

export type FilterUser = keyof typeof FILTER_USERS;
export type FilterGroup = "engineering" | "tours" | "night";

export interface FilterDirectory {
  readonly users: Record<FilterUser, string>;
  readonly groups: Record<FilterGroup, string>;
}

export async function seedFilterDirectory(t: TestApp, c: SeededClient): Promise<FilterDirectory> {
  const users = {} as Record<FilterUser, string>;
  for (const [key, body] of Object.entries(FILTER_USERS)) {
    const res = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA, ENTERPRISE_SCHEMA], ...body });
    if (res.statusCode !== 201) throw new Error(`user ${key}: ${res.body}`);
    users[key as FilterUser] = res.json().id;
  }
  const group = async (displayName: string, externalId: string | undefined, members: string[]) => {
    const res = await scim(t, c, "POST", "/Groups", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName,
      ...(externalId === undefined ? {} : { externalId }),
      members: members.map((value) => ({ value })),
    });
    if (res.statusCode !== 201) throw new Error(`group ${displayName}: ${res.body}`);
    return res.json().id as string;
  };
  const night = await group("Night Tours", undefined, []);
  const engineering = await group("Engineering", "eng", [users.jsmith, users.ada]);
  const tours = await group("Tours", undefined, [users.bjensen, night]);
  return { users, groups: { engineering, tours, night } };
}
