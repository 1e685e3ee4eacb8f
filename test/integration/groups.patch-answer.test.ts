import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { MEMBER_CHUNK } from "../../src/scim/groups/send.js";
import { createGroup, memberIds, patchGroup, type ScimMember } from "../helpers/groups.js";
import { insertIdentity } from "../helpers/identities.js";
import { adminCall, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { GROUP_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * What a group PATCH answers: 204 by default, 200 with the projected group when the query names attributes or
 * excludedAttributes, 200 with the whole group on a connection set to `full`; and a large group's GET, streamed in
 * chunks, is the same document as a small one's.
 */
const { t, c } = useTestApp({ seed: true });
let users: string[];

beforeAll(async () => {
  users = [];
  for (let i = 0; i < 3; i++) users.push(await insertIdentity(t.db, c.organizationId, `answer-${i}@example.com`));
});

const addOne = (client: SeededClient, id: string, user: string, query = "") =>
  patchGroup(t, client, id, [{ op: "Add", path: "members", value: [{ value: user, $ref: null }] }], query);

describe("PATCH /Groups/{id} answers", () => {
  it("204 No Content by default, with no body and no content type; the change is made", async () => {
    const group = await createGroup(t, c, "Answer default");
    const res = await addOne(c, group.id, users[0] as string);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe("");
    expect(res.headers["content-type"]).toBeUndefined();
    expect(await memberIds(t, c, group.id)).toEqual([users[0]]);
  });

  it("a PATCH that changes nothing, and a rename, are 204 as well", async () => {
    const group = await createGroup(t, c, "Answer unchanged", { members: [{ value: users[0] }] });
    expect((await addOne(c, group.id, users[0] as string)).statusCode).toBe(204);
    const renamed = await patchGroup(t, c, group.id, [{ op: "replace", path: "displayName", value: "Renamed" }]);
    expect(renamed.statusCode).toBe(204);
    expect((await scim(t, c, "GET", `/Groups/${group.id}`)).json().displayName).toBe("Renamed");
  });

  it("attributes in the query: 200 with those attributes (RFC 7644 §3.9)", async () => {
    const group = await createGroup(t, c, "Answer projected");
    const res = await addOne(c, group.id, users[1] as string, "?attributes=displayName");
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ schemas: [GROUP_SCHEMA], id: group.id, displayName: "Answer projected" });
  });

  it("excludedAttributes=members in the query: 200 with the group without its members", async () => {
    const group = await createGroup(t, c, "Answer excluded");
    const res = await addOne(c, group.id, users[1] as string, "?excludedAttributes=members");
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: group.id, displayName: "Answer excluded" });
    expect(res.json()).not.toHaveProperty("members");
  });

  it("attributes=members: 200 with the members after the change", async () => {
    const group = await createGroup(t, c, "Answer members", { members: [{ value: users[0] }] });
    const res = await addOne(c, group.id, users[2] as string, "?attributes=members.value");
    expect(res.statusCode).toBe(200);
    const values = (res.json().members as ScimMember[]).map((m) => m.value).sort();
    expect(values).toEqual([users[0], users[2]].sort());
  });

  it("a blank attributes list counts as absent: 204", async () => {
    const group = await createGroup(t, c, "Answer blank");
    expect((await addOne(c, group.id, users[0] as string, "?attributes=")).statusCode).toBe(204);
  });

  it("an error is still an error: 404 for an unknown group, 400 for a bad member", async () => {
    expect((await addOne(c, "0191b8a8-0000-7000-8000-000000000000", users[0] as string)).statusCode).toBe(404);
    const group = await createGroup(t, c, "Answer error");
    const res = await patchGroup(t, c, group.id, [{ op: "add", path: "members", value: [{ value: "271" }] }]);
    expect(res.statusCode).toBe(400);
  });
});

describe("the connection setting group_patch_response", () => {
  it("defaults to no_content, is shown by the admin API, and is PATCHable with an update mask", async () => {
    const client = await seedClient(t);
    const read = await adminCall(t, "GET", `/scimClients/${client.clientId}`);
    expect(read.json().group_patch_response).toBe("no_content");
    const changed = await adminCall(t, "PATCH", `/scimClients/${client.clientId}?update_mask=group_patch_response`, {
      group_patch_response: "full",
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json().group_patch_response).toBe("full");
    const group = await createGroup(t, client, "Full answer");
    const user = await insertIdentity(t.db, client.organizationId, "full@example.com");
    const res = await addOne(client, group.id, user);
    expect(res.statusCode).toBe(200);
    expect(res.json().members.map((m: ScimMember) => m.value)).toEqual([user]);
  });

  it("full on create; a projection still applies; an unknown value is 400 INVALID_ARGUMENT", async () => {
    const client = await seedClient(t, { group_patch_response: "full" });
    const group = await createGroup(t, client, "Full projected");
    const user = await insertIdentity(t.db, client.organizationId, "projected@example.com");
    const res = await addOne(client, group.id, user, "?excludedAttributes=members");
    expect(res.statusCode).toBe(200);
    expect(res.json()).not.toHaveProperty("members");
    const org = client.organizationId;
    const bad = await adminCall(t, "POST", "/scimClients", { organization_id: org, group_patch_response: "some" });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.status).toBe("INVALID_ARGUMENT");
  });
});

describe("a group larger than one chunk of members", () => {
  it("GET streams the same document: every member once, in id order, with display and type", async () => {
    const n = MEMBER_CHUNK * 2 + 7;
    const group = await createGroup(t, c, "Streamed");
    await sql`
      with made as (
        insert into identities (id, organization_id, active, user_name, scim, created_at, updated_at, modified_hour)
        select gen_random_uuid(), ${c.organizationId}::uuid, true, 'streamed-' || i || '@example.com',
          jsonb_build_object('userName', 'streamed-' || i || '@example.com'), now(), now(), date_bin('1 hour', now(), timestamptz '2000-01-01 00:00:00+00')
        from generate_series(1, ${n}::int) as i
        returning id, organization_id
      )
      insert into group_user_members (group_id, identity_id, organization_id)
      select ${group.id}::uuid, id, organization_id from made`.execute(t.db);
    const child = await createGroup(t, c, "Streamed child");
    await addOne(c, group.id, child.id);

    const res = await scim(t, c, "GET", `/Groups/${group.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-length"]).toBeUndefined();
    const body = res.json();
    expect(body).toMatchObject({ id: group.id, displayName: "Streamed", meta: { resourceType: "Group" } });
    const members = body.members as ScimMember[];
    expect(members).toHaveLength(n + 1);
    const values = members.map((m) => m.value);
    expect(values).toEqual([...values].sort());
    expect(new Set(values).size).toBe(n + 1);
    expect(members.find((m) => m.value === child.id)).toMatchObject({ type: "Group", display: "Streamed child" });
    expect(members.filter((m) => m.type === "User")[0]?.display).toMatch(/^streamed-\d+@example\.com$/);

    const projected = (await scim(t, c, "GET", `/Groups/${group.id}?attributes=members.value`)).json();
    expect(Object.keys(projected).sort()).toEqual(["id", "members", "schemas"]);
    expect((projected.members as ScimMember[]).map((m) => m.value)).toEqual(values);
    for (const m of projected.members as ScimMember[]) expect(Object.keys(m)).toEqual(["value"]);
  });
});
