import { beforeAll, describe, expect, it } from "vitest";
import { type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/** With auto_link, POST of an existing user updates it as a PUT would, 201. */
const { t } = useTestApp({ recording: true });
const events = () => t.recorder.events();
let linking: SeededClient;
let plain: SeededClient;
let n = 0;
const fresh = () => `al${++n}@example.com`;

beforeAll(async () => {
  linking = await seedClient(t, { auto_link: true });
  plain = await seedClient(t, { auto_link: false });
});

const post = (client: SeededClient, body: Record<string, unknown>) =>
  scim(t, client, "POST", "/Users", { schemas: [USER_SCHEMA], ...body });
const kinds = async (id: string) => (await events()).filter((e) => e.resourceId === id).map((e) => e.kind);

describe("auto_link on", () => {
  it("links on userName (any case): 201 with the existing id, attributes replaced, user.updated", async () => {
    const userName = fresh();
    const first = (await post(linking, { userName, title: "Old", displayName: "D" })).json();
    const res = await post(linking, { userName: userName.toUpperCase(), title: "New" });
    expect(res.statusCode).toBe(201);
    expect(res.json().id).toBe(first.id);
    expect(res.json().title).toBe("New");
    // As a PUT would: omitted attributes are reset.
    expect(res.json().displayName).toBeUndefined();
    expect(await kinds(first.id)).toEqual(["user.created", "user.updated"]);
  });

  it("links on the primary email", async () => {
    const email = fresh();
    const first = (await post(linking, { userName: fresh(), emails: [{ value: email, primary: true }] })).json();
    const renamed = fresh();
    const res = await post(linking, { userName: renamed, emails: [{ value: email, primary: true }] });
    expect(res.statusCode).toBe(201);
    expect(res.json().id).toBe(first.id);
    expect(res.json().userName).toBe(renamed);
  });

  it("writes and records nothing when the linked user already matches", async () => {
    const body = { userName: fresh(), title: "Same" };
    const first = (await post(linking, body)).json();
    t.clock.advance(1000);
    const res = await post(linking, body);
    expect(res.statusCode).toBe(201);
    expect(res.json().id).toBe(first.id);
    expect(res.json().meta.lastModified).toBe(first.meta.lastModified);
    expect(await kinds(first.id)).toEqual(["user.created"]);
  });

  it("never links across organizations: 409 another scope", async () => {
    const userName = fresh();
    await post(plain, { userName });
    const res = await post(linking, { userName });
    expect(res.statusCode).toBe(409);
    expect(res.json().detail).toBe("identity already exists in another scope");
  });

  it("does not link on a non-primary email", async () => {
    const email = fresh();
    await post(linking, {
      userName: fresh(),
      emails: [
        { value: email, type: "home" },
        { value: fresh(), primary: true },
      ],
    });
    const res = await post(linking, { userName: fresh(), emails: [{ value: email }] });
    expect(res.statusCode).toBe(409);
    expect(res.json().scimType).toBe("uniqueness");
  });
});

describe("auto_link off", () => {
  it("answers 409 uniqueness and changes nothing", async () => {
    const userName = fresh();
    const first = (await post(plain, { userName, title: "Keep" })).json();
    const res = await post(plain, { userName, title: "Other" });
    expect(res.statusCode).toBe(409);
    expect(res.json().scimType).toBe("uniqueness");
    expect((await scim(t, plain, "GET", `/Users/${first.id}`)).json().title).toBe("Keep");
  });
});
