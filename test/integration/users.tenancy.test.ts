import { beforeAll, describe, expect, it } from "vitest";
import { type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/** A resource of another organization answers as if it did not exist. */
const { t } = useTestApp();
let mine: SeededClient;
let theirs: SeededClient;
let theirUser: { id: string; userName: string };

beforeAll(async () => {
  mine = await seedClient(t);
  theirs = await seedClient(t);
  const res = await scim(t, theirs, "POST", "/Users", {
    schemas: [USER_SCHEMA],
    userName: "theirs@example.com",
    title: "T",
  });
  theirUser = res.json();
});

describe("another organization's user is a 404", () => {
  it("GET", async () => {
    expect((await scim(t, mine, "GET", `/Users/${theirUser.id}`)).statusCode).toBe(404);
  });

  it("PUT, and nothing changes", async () => {
    const res = await scim(t, mine, "PUT", `/Users/${theirUser.id}`, {
      schemas: [USER_SCHEMA],
      userName: "x@example.com",
    });
    expect(res.statusCode).toBe(404);
    expect((await scim(t, theirs, "GET", `/Users/${theirUser.id}`)).json().userName).toBe("theirs@example.com");
  });

  it("PATCH, and nothing changes", async () => {
    const res = await scim(t, mine, "PATCH", `/Users/${theirUser.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "title", value: "hacked" }],
    });
    expect(res.statusCode).toBe(404);
    expect((await scim(t, theirs, "GET", `/Users/${theirUser.id}`)).json().title).toBe("T");
  });

  it("DELETE, and the user survives", async () => {
    expect((await scim(t, mine, "DELETE", `/Users/${theirUser.id}`)).statusCode).toBe(404);
    expect((await scim(t, theirs, "GET", `/Users/${theirUser.id}`)).statusCode).toBe(200);
  });

  it("GET /Users lists only this organization's users, also when filtered", async () => {
    const all = await scim(t, mine, "GET", "/Users");
    expect(all.json().totalResults).toBe(0);
    const filtered = await scim(
      t,
      mine,
      "GET",
      `/Users?filter=${encodeURIComponent('userName eq "theirs@example.com"')}`,
    );
    expect(filtered.json().totalResults).toBe(0);
    expect((await scim(t, theirs, "GET", "/Users")).json().totalResults).toBe(1);
  });

  it("a client of the same organization sees the user", async () => {
    const sibling = await t.request({
      method: "POST",
      url: "/v2alpha1/admin/scimClients",
      headers: { authorization: "Bearer test-admin-token-0123456789" },
      payload: { organization_id: theirs.organizationId, secret: "sibling-secret-1234567890" },
    });
    const base = `/scim/${sibling.json().client_id}/v2`;
    const res = await t.request({
      method: "GET",
      url: `${base}/Users/${theirUser.id}`,
      headers: { authorization: "Bearer sibling-secret-1234567890" },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().meta.location).toBe(`http://roster.test${base}/Users/${theirUser.id}`);
  });
});
