import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { insertGroupWithUser } from "../helpers/groups.js";
import { scim } from "../helpers/seed.js";
import { ENTERPRISE_SCHEMA, USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * GET /Users/{id} and GET /Users without a projection are spliced from PostgreSQL's JSON text (renderUserText);
 * with a projection that changes nothing (an unknown excluded attribute) they take the object path. Both must agree.
 */
const GROUP = "0190a000-0000-7000-8000-0000000000cc";
const { t, c } = useTestApp({ seed: true });
let plain: string;
let managed: string;
let bare: string;

beforeAll(async () => {
  const create = async (body: Record<string, unknown>) =>
    (await scim(t, c, "POST", "/Users", body)).json().id as string;
  plain = await create({
    schemas: [USER_SCHEMA, ENTERPRISE_SCHEMA],
    userName: 'Text"Render\\@example.com',
    name: { givenName: "Zoë", familyName: "O'Brien \u2028 line" },
    emails: [{ value: "text@example.com", type: "work", primary: true }],
    [ENTERPRISE_SCHEMA]: { employeeNumber: "E1", department: "R&D" },
  });
  managed = await create({
    schemas: [USER_SCHEMA, ENTERPRISE_SCHEMA],
    userName: "managed@example.com",
    [ENTERPRISE_SCHEMA]: { manager: { value: plain } },
  });
  bare = await create({ schemas: [USER_SCHEMA], userName: "bare@example.com" });
  await insertGroupWithUser(t, {
    id: GROUP,
    organizationId: c.organizationId,
    displayName: 'Text "group"',
    identityId: plain,
  });
});

const get = (path: string) => scim(t, c, "GET", path);
const same = "excludedAttributes=noSuchAttribute";

describe("users rendered as JSON text", () => {
  it("GET /Users/{id} equals the object rendering, schemas and id first", async () => {
    for (const id of [plain, managed, bare]) {
      const text = await get(`/Users/${id}`);
      const object = await get(`/Users/${id}?${same}`);
      expect(text.statusCode).toBe(200);
      expect(text.headers["content-type"]).toBe(object.headers["content-type"]);
      expect(text.json()).toEqual(object.json());
      expect(Object.keys(text.json()).slice(0, 2)).toEqual(["schemas", "id"]);
    }
    const body = (await get(`/Users/${plain}`)).json();
    expect(body.groups).toEqual([{ value: GROUP, display: 'Text "group"', type: "direct" }]);
    expect(body.meta.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect((await get(`/Users/${managed}`)).json()[ENTERPRISE_SCHEMA].manager.displayName).toBe(
      'Text"Render\\@example.com',
    );
  });

  it("list pages (offset and cursor) equal the object rendering", async () => {
    for (const query of ["startIndex=1&count=10", "cursor&count=2", "filter=userName%20eq%20%22bare@example.com%22"]) {
      const text = await get(`/Users?${query}`);
      const object = await get(`/Users?${query}&${same}`);
      expect(text.statusCode).toBe(200);
      expect(text.headers["content-type"]).toBe(object.headers["content-type"]);
      const strip = (b: Record<string, unknown>) => ({ ...b, nextCursor: undefined });
      expect(strip(text.json())).toEqual(strip(object.json()));
    }
  });

  it("a stored document holding a key the server owns takes the object path (no key twice)", async () => {
    await sql`update identities set scim = scim || '{"id": "not-the-id", "meta": {"x": 1}}'::jsonb
      where id = ${bare}`.execute(t.db);
    const res = await get(`/Users/${bare}`);
    expect(res.json().id).toBe(bare);
    expect(res.json().meta.resourceType).toBe("User");
    expect(res.body.match(/"id":/g)?.length).toBe(1);
  });
});
