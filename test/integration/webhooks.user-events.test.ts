import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { isUuid } from "../../src/platform/ids.js";
import { verifyWebhookSignature } from "../../src/webhooks/verify.js";
import { idpBody } from "../helpers/idp-fixtures.js";
import { type SeededClient, scim } from "../helpers/seed.js";
import { GROUP_SCHEMA, PATCH_OP, PRODUCT, TENANT, USER_SCHEMA, WEBHOOK_SECRET } from "../helpers/constants.js";
import { type Delivery, kinds } from "../helpers/webhook-receiver.js";
import { useTestApp } from "../helpers/suite.js";

const PASSWORD = "Pa55word-never-sent";

const { t: e, c } = useTestApp({ receiver: true });
let n = 0;
const unique = (prefix: string) => `${prefix}-${++n}-${Math.random().toString(36).slice(2, 8)}`;

beforeEach(async () => {
  // Every test starts with nothing pending.
  await e.deliver();
});

const user = (userName: string, extra: Record<string, unknown> = {}) => ({
  schemas: [USER_SCHEMA],
  userName,
  name: { givenName: "Ada", familyName: "Lovelace" },
  emails: [
    { value: `${userName}.home@example.com`, type: "home" },
    { value: `${userName}.work@example.com`, type: "work", primary: true },
  ],
  ...extra,
});

async function create(body: Record<string, unknown>, client = c): Promise<Record<string, unknown> & { id: string }> {
  const res = await scim(e, client, "POST", "/Users", body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** The SCIM user as stored = GET /Users/{id} without what the server computes (meta, groups). */
async function stored(id: string, client = c): Promise<Record<string, unknown>> {
  const res = await scim(e, client, "GET", `/Users/${id}`);
  expect(res.statusCode).toBe(200);
  const { meta: _meta, groups: _groups, ...rest } = res.json() as Record<string, unknown>;
  return rest;
}

const patch = (id: string, operations: unknown[]) =>
  scim(e, c, "PATCH", `/Users/${id}`, { schemas: [PATCH_OP], Operations: operations });

function only(ds: Delivery[], event: string): Delivery {
  expect(kinds(ds)).toEqual([event]);
  const [d] = ds;
  if (d === undefined) throw new Error("no delivery");
  return d;
}

describe("POST /Users → user.created", () => {
  it("delivers exactly one user.created with the documented body, signed over the raw bytes", async () => {
    const created = await create(user(unique("ada"), { password: PASSWORD, externalId: "ext-1" }));
    const d = only(await e.deliver(), "user.created");

    expect(Object.keys(d.body)).toEqual(["directory_id", "event", "tenant", "product", "data", "id", "created_at"]);
    expect(d.body).toMatchObject({ directory_id: c.clientId, event: "user.created", tenant: TENANT, product: PRODUCT });
    expect(Object.keys(d.body.data).sort()).toEqual(["active", "email", "first_name", "id", "last_name", "raw"]);
    expect(d.body.data).toMatchObject({
      id: created.id,
      first_name: "Ada",
      last_name: "Lovelace",
      email: `${created.userName as string}.work@example.com`,
      active: true,
    });
    expect(d.body.data.raw).toEqual(await stored(created.id));
    expect(d.received.rawBody.toString("utf8")).not.toContain(PASSWORD);
    expect(d.received.rawBody.toString("utf8")).not.toContain("password");

    // The receiver's own check: the exported helper over the bytes received, with the right secret only.
    const header = d.received.headers["service-signature"] as string;
    expect(header).toMatch(/^t=\d{13},s=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(WEBHOOK_SECRET, header, d.received.rawBody)).toBe(true);
    expect(verifyWebhookSignature("another-secret", header, d.received.rawBody)).toBe(false);
    const tampered = Buffer.from(d.received.rawBody.toString("utf8").replace("Ada", "Eve"));
    expect(verifyWebhookSignature(WEBHOOK_SECRET, header, tampered)).toBe(false);
    expect(isUuid(d.webhookId)).toBe(true);
  });

  it("an Okta create (password, read-only groups) is one user.created without the password", async () => {
    const body = idpBody("okta-create-user");
    const userName = `${unique("okta")}@okta.local`;
    const created = await create({ ...body, userName, emails: [{ primary: true, value: userName, type: "work" }] });
    const d = only(await e.deliver(), "user.created");
    expect(d.body.data).toMatchObject({ id: created.id, first_name: "Test", last_name: "User", email: userName });
    expect(d.received.rawBody.toString("utf8")).not.toContain(body.password as string);
  });

  it.each([
    ["the primary email", (u: string) => user(u), (u: string) => `${u}.work@example.com`],
    [
      "the first email when none is primary",
      (u: string) => user(u, { emails: [{ value: `${u}.a@example.com` }, { value: `${u}.b@example.com` }] }),
      (u: string) => `${u}.a@example.com`,
    ],
    [
      "userName when it is an email",
      (u: string) => user(`${u}@example.com`, { emails: [] }),
      (u: string) => `${u}@example.com`,
    ],
    ["empty when there is no email at all", (u: string) => user(u, { emails: [] }), () => ""],
  ])("email is %s", async (_name, body, expected) => {
    const u = unique("mail");
    await create(body(u));
    expect(only(await e.deliver(), "user.created").body.data.email).toBe(expected(u));
  });

  it("a failed create (400, 409) emits nothing", async () => {
    const taken = await create(user(unique("taken")));
    await e.deliver();
    expect((await scim(e, c, "POST", "/Users", { schemas: [USER_SCHEMA] })).statusCode).toBe(400);
    expect((await scim(e, c, "POST", "/Users", user(taken.userName as string))).statusCode).toBe(409);
    expect((await scim(e, c, "POST", "/Users", user(unique("tz"), { timezone: "Mars/Olympus" }))).statusCode).toBe(400);
    expect(await e.deliver()).toEqual([]);
  });
});

describe("PUT and PATCH /Users → user.updated", () => {
  it("PUT that changes something is one user.updated with the new state; the same PUT again emits nothing", async () => {
    const created = await create(user(unique("put")));
    await e.deliver();
    const replacement = user(created.userName as string, { name: { givenName: "Grace", familyName: "Hopper" } });
    expect((await scim(e, c, "PUT", `/Users/${created.id}`, replacement)).statusCode).toBe(200);
    const d = only(await e.deliver(), "user.updated");
    expect(d.body.data).toMatchObject({ id: created.id, first_name: "Grace", last_name: "Hopper" });
    expect(d.body.data.raw).toEqual(await stored(created.id));

    // Okta's PUT repeats read-only attributes (id, groups, meta): still the same state.
    const okta = { ...replacement, id: created.id, groups: [], meta: { resourceType: "User" } };
    expect((await scim(e, c, "PUT", `/Users/${created.id}`, okta)).statusCode).toBe(200);
    expect((await scim(e, c, "PUT", `/Users/${created.id}`, replacement)).statusCode).toBe(200);
    expect(await e.deliver()).toEqual([]);
  });

  it("PATCH deactivate (Okta) is one user.updated with active false; repeating it emits nothing", async () => {
    const created = await create(user(unique("deact")));
    await e.deliver();
    const body = idpBody("okta-patch-deactivate");
    expect((await scim(e, c, "PATCH", `/Users/${created.id}`, body)).statusCode).toBe(200);
    const d = only(await e.deliver(), "user.updated");
    expect(d.body.data).toMatchObject({ id: created.id, active: false });
    expect((d.body.data.raw as Record<string, unknown>).active).toBe(false);

    expect((await scim(e, c, "PATCH", `/Users/${created.id}`, body)).statusCode).toBe(200);
    expect((await patch(created.id, [{ op: "replace", path: "active", value: "False" }])).statusCode).toBe(200);
    expect(await e.deliver()).toEqual([]);
  });

  it("PATCH of Entra's string boolean and of a value that is already there emits nothing", async () => {
    const created = await create(user(unique("same")));
    await e.deliver();
    expect((await patch(created.id, [{ op: "Replace", path: "active", value: "True" }])).statusCode).toBe(200);
    expect((await patch(created.id, [{ op: "replace", path: "name.givenName", value: "Ada" }])).statusCode).toBe(200);
    expect((await patch(created.id, [{ op: "replace", path: "id", value: "ignored" }])).statusCode).toBe(200);
    expect(await e.deliver()).toEqual([]);
  });

  it("a password change is a user.updated that never carries the password", async () => {
    const created = await create(user(unique("pw")));
    await e.deliver();
    const res = await scim(e, c, "PATCH", `/Users/${created.id}`, idpBody("okta-patch-password"));
    expect(res.statusCode, res.body).toBe(200);
    const d = only(await e.deliver(), "user.updated");
    expect(d.received.rawBody.toString("utf8")).not.toMatch(/password/i);
  });

  it("a failed PATCH or PUT (400, 409, 404) emits nothing", async () => {
    const a = await create(user(unique("fa")));
    const b = await create(user(unique("fb")));
    await e.deliver();
    expect((await patch(a.id, [{ op: "remove" }])).statusCode).toBe(400);
    expect(
      (
        await patch(a.id, [
          { op: "replace", path: "nickName", value: "x" },
          { op: "replace", path: "bogus", value: 1 },
        ])
      ).statusCode,
    ).toBe(400);
    expect((await patch(a.id, [{ op: "replace", path: "userName", value: b.userName }])).statusCode).toBe(409);
    expect((await scim(e, c, "PUT", `/Users/${a.id}`, user(b.userName as string))).statusCode).toBe(409);
    expect((await scim(e, c, "PUT", `/Users/${a.id}`, { schemas: [USER_SCHEMA] })).statusCode).toBe(400);
    expect(
      (await patch("01970000-0000-7000-8000-000000000000", [{ op: "replace", path: "active", value: false }]))
        .statusCode,
    ).toBe(404);
    expect(await e.deliver()).toEqual([]);
  });
});

describe("DELETE /Users → user.deleted", () => {
  it("is one user.deleted with the user's last state; a second DELETE (404) emits nothing", async () => {
    const created = await create(user(unique("del"), { password: PASSWORD }));
    const last = await stored(created.id);
    await e.deliver();
    expect((await scim(e, c, "DELETE", `/Users/${created.id}`)).statusCode).toBe(204);
    const d = only(await e.deliver(), "user.deleted");
    expect(d.body.data).toMatchObject({ id: created.id, first_name: "Ada", last_name: "Lovelace", active: true });
    expect(d.body.data.raw).toEqual(last);
    expect(d.received.rawBody.toString("utf8")).not.toContain(PASSWORD);
    expect((await scim(e, c, "DELETE", `/Users/${created.id}`)).statusCode).toBe(404);
    expect(await e.deliver()).toEqual([]);
  });
});

describe("DELETE /Users of a group member → group.user_removed per direct group, then user.deleted", () => {
  it("emits one group.user_removed per group the user was a direct member of, keyed by the group", async () => {
    const member = await create(user(unique("member")));
    const group = async (displayName: string, members: string[]) => {
      const res = await scim(e, c, "POST", "/Groups", {
        schemas: [GROUP_SCHEMA],
        displayName,
        members: members.map((value) => ({ value })),
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json() as { id: string; displayName: string };
    };
    const a = await group(unique("grp-a"), [member.id]);
    const b = await group(unique("grp-b"), [member.id]);
    // Only a nested member of this one (through b): no event for it.
    await group(unique("grp-parent"), [b.id]);
    const last = await stored(member.id);
    await e.deliver();

    expect((await scim(e, c, "DELETE", `/Users/${member.id}`)).statusCode).toBe(204);
    const ds = await e.deliver();
    expect(kinds(ds).sort()).toEqual(["group.user_removed", "group.user_removed", "user.deleted"]);
    const removed = ds.filter((d) => d.event === "group.user_removed");
    expect(removed.map((d) => (d.body.data.group as { id: string }).id).sort()).toEqual([a.id, b.id].sort());
    for (const d of removed) {
      const g = d.body.data.group as { id: string; name: string; raw: Record<string, unknown> };
      expect(g.name).toBe(g.id === a.id ? a.displayName : b.displayName);
      expect(g.raw).toMatchObject({ id: g.id, displayName: g.name });
      expect(d.body.data).toMatchObject({ id: member.id, first_name: "Ada", last_name: "Lovelace", active: true });
      expect(d.body.data.raw).toEqual(last);
    }
    expect(
      only(
        ds.filter((d) => d.event === "user.deleted"),
        "user.deleted",
      ).body.data.raw,
    ).toEqual(last);
  });

  it("records the group.user_removed rows before the user.deleted one, in the same transaction", async () => {
    const member = await create(user(unique("order")));
    const res = await scim(e, c, "POST", "/Groups", {
      schemas: [GROUP_SCHEMA],
      displayName: unique("grp-order"),
      members: [{ value: member.id }],
    });
    const groupId = (res.json() as { id: string }).id;
    await e.deliver();
    // The dispatcher runs only inside deliver(): the outbox still holds what the DELETE recorded.
    expect((await scim(e, c, "DELETE", `/Users/${member.id}`)).statusCode).toBe(204);
    const rows = await e.database.db
      .selectFrom("webhook_outbox")
      .select(["event", "ordering_key"])
      .where("client_id", "=", c.clientId)
      .orderBy("seq")
      .execute();
    expect(rows).toEqual([
      { event: "group.user_removed", ordering_key: groupId },
      { event: "user.deleted", ordering_key: member.id },
    ]);
    expect(kinds(await e.deliver()).sort()).toEqual(["group.user_removed", "user.deleted"]);
  });
});

describe("auto-link → user.updated", () => {
  let linking: SeededClient;
  beforeAll(async () => {
    linking = await e.seed({ auto_link: true });
  });

  it("a POST that links to an existing identity is one user.updated (not user.created) with its id", async () => {
    const userName = unique("link");
    const first = await create(user(userName), linking);
    expect(kinds(await e.deliver())).toEqual(["user.created"]);
    const res = await scim(
      e,
      linking,
      "POST",
      "/Users",
      user(userName, { name: { givenName: "Linked", familyName: "Again" } }),
    );
    expect(res.statusCode).toBe(201);
    expect(res.json().id).toBe(first.id);
    const d = only(await e.deliver(), "user.updated");
    expect(d.body.directory_id).toBe(linking.clientId);
    expect(d.body.data).toMatchObject({ id: first.id, first_name: "Linked", last_name: "Again" });
  });

  it("a POST that links without changing anything emits nothing", async () => {
    const userName = unique("link-same");
    await create(user(userName), linking);
    await e.deliver();
    expect((await scim(e, linking, "POST", "/Users", user(userName))).statusCode).toBe(201);
    expect(await e.deliver()).toEqual([]);
  });
});

describe("webhook-id", () => {
  it("is unique across deliveries", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const u = await create(user(unique("ids")));
      await patch(u.id, [{ op: "replace", path: "nickName", value: `n${i}` }]);
      await scim(e, c, "DELETE", `/Users/${u.id}`);
    }
    const ds = await e.deliver();
    expect(ds).toHaveLength(15);
    for (const d of ds) ids.push(d.webhookId);
    expect(new Set(ids).size).toBe(15);
  });
});
