import { describe, expect, it } from "vitest";
import { createUser, scim } from "../helpers/seed.js";
import { PATCH_OP } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

const { t, c } = useTestApp({ recording: true, seed: true });
const events = () => t.recorder.events();
const patch = (id: string, ...operations: unknown[]) =>
  scim(t, c, "PATCH", `/Users/${id}`, { schemas: [PATCH_OP], Operations: operations });
const eventKinds = async (id: string) => (await events()).filter((e) => e.resourceId === id).map((e) => e.kind);

describe("PATCH /Users/{id} (RFC 7644 §3.5.2)", () => {
  it("applies add, replace and remove and answers 200 with the user", async () => {
    const user = await createUser(t, c, { title: "Old", nickName: "Nick" });
    t.clock.advance(5000);
    const res = await patch(
      user.id,
      { op: "add", path: "emails", value: [{ value: "x@example.com", type: "home" }] },
      { op: "replace", path: "title", value: "New" },
      { op: "remove", path: "nickName" },
    );
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ title: "New", emails: [{ value: "x@example.com", type: "home" }] });
    expect(res.json().nickName).toBeUndefined();
    expect(res.json().meta.lastModified).toBe(t.clock.now().toISOString());
    expect((await scim(t, c, "GET", `/Users/${user.id}`)).json()).toEqual(res.json());
    expect(await eventKinds(user.id)).toEqual(["user.created", "user.updated"]);
  });

  it("is atomic: when one operation fails, none applies", async () => {
    const user = await createUser(t, c, { title: "Keep" });
    const res = await patch(
      user.id,
      { op: "replace", path: "title", value: "Changed" },
      { op: "replace", path: "noSuchAttribute", value: "x" },
    );
    expect(res.statusCode).toBe(400);
    expect((await scim(t, c, "GET", `/Users/${user.id}`)).json().title).toBe("Keep");
    expect(await eventKinds(user.id)).toEqual(["user.created"]);
  });

  it("writes and records nothing when nothing changes", async () => {
    const user = await createUser(t, c, { title: "Same" });
    t.clock.advance(5000);
    const res = await patch(user.id, { op: "replace", path: "title", value: "Same" });
    expect(res.statusCode).toBe(200);
    expect(res.json().meta.lastModified).toBe(user.meta.lastModified);
    expect(await eventKinds(user.id)).toEqual(["user.created"]);
  });

  it("validates the patched user like a PUT body: invalid time zone, empty userName", async () => {
    const user = await createUser(t, c);
    const tz = await patch(user.id, { op: "replace", path: "timezone", value: "Mars/Olympus" });
    expect(tz.statusCode).toBe(400);
    expect(tz.json().scimType).toBe("invalidSyntax");
    const empty = await patch(user.id, { op: "replace", path: "userName", value: "" });
    expect(empty.statusCode).toBe(400);
  });

  it("refuses to remove the required userName", async () => {
    const user = await createUser(t, c);
    const res = await patch(user.id, { op: "remove", path: "userName" });
    expect(res.statusCode).toBe(400);
  });

  it("moves primary: setting a new primary email clears the old one", async () => {
    const user = await createUser(t, c, { emails: [{ value: "a-moves@example.com", type: "work", primary: true }] });
    const res = await patch(user.id, {
      op: "add",
      path: "emails",
      value: [{ value: "b-moves@example.com", primary: true }],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().emails.filter((e: { primary?: boolean }) => e.primary === true)).toEqual([
      { value: "b-moves@example.com", primary: true },
    ]);
  });

  it("refuses a body without the PatchOp schema", async () => {
    const user = await createUser(t, c);
    const res = await scim(t, c, "PATCH", `/Users/${user.id}`, {
      Operations: [{ op: "add", path: "title", value: "x" }],
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().scimType).toBe("invalidSyntax");
  });

  it("answers 404 for an unknown user", async () => {
    const res = await patch("00000000-0000-4000-8000-000000000000", { op: "replace", path: "title", value: "x" });
    expect(res.statusCode).toBe(404);
  });
});
