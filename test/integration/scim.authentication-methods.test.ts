import { describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { adminCall, type SeededClient, seedClient } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

// Another instance on the same database with its own client cache: tokens verify there without a shared store.
const { t, second: other } = useTestApp({ secondInstance: true });
const withBasic = { authentication_methods: ["bearer", "basic", "client_credentials"] };

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
const users = (app: TestApp, c: SeededClient, authorization: string) =>
  app.request({ method: "GET", url: `${c.base}/Users`, headers: { authorization } });

const tokenRequest = (app: TestApp, c: SeededClient, form: Record<string, string>, authorization?: string) =>
  app.request({
    method: "POST",
    url: `${c.base}/oauth/token`,
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...(authorization === undefined ? {} : { authorization }),
    },
    payload: new URLSearchParams(form).toString(),
  });

const clientCredentials = (clientId: string, secret: string) => ({
  grant_type: "client_credentials",
  client_id: clientId,
  client_secret: secret,
});

/** The token request an IdP sends: the client credentials grant, the credentials in the form body. */
const tokenFor = (app: TestApp, c: SeededClient, secret = c.secret) =>
  tokenRequest(app, c, clientCredentials(c.clientId, secret));

async function tokenOf(app: TestApp, c: SeededClient, secret = c.secret): Promise<string> {
  const res = await tokenFor(app, c, secret);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().access_token as string;
}

describe("HTTP Basic", () => {
  it("accepts the client id and the secret, and nothing else", async () => {
    const c = await seedClient(t, withBasic);
    expect((await users(t, c, basic(c.clientId, c.secret))).statusCode).toBe(200);
    expect((await users(t, c, basic(c.clientId, `${c.secret}x`))).statusCode).toBe(401);
    expect((await users(t, c, basic("someone-else", c.secret))).statusCode).toBe(401);
    expect((await users(t, c, `Basic ${c.secret}`)).statusCode).toBe(401);
  });

  it("follows the secret's rotation: both during the grace period, then only the new one", async () => {
    const c = await seedClient(t, withBasic);
    const rotated = await adminCall(t, "POST", `/scimClients/${c.clientId}:rotateSecret`, { grace_period: "60s" });
    const next = rotated.json().secret as string;
    expect((await users(t, c, basic(c.clientId, c.secret))).statusCode).toBe(200);
    expect((await users(t, c, basic(c.clientId, next))).statusCode).toBe(200);
    t.clock.advance(60_000);
    expect((await users(t, c, basic(c.clientId, c.secret))).statusCode).toBe(401);
    expect((await users(t, c, basic(c.clientId, next))).statusCode).toBe(200);
  });

  it("is refused unless the connection accepts it (the default), while the bearer secret works", async () => {
    const c = await seedClient(t);
    expect((await users(t, c, basic(c.clientId, c.secret))).statusCode).toBe(401);
    expect((await users(t, c, `Bearer ${c.secret}`)).statusCode).toBe(200);
  });
});

describe("OAuth 2.0 client credentials at {scim base}/oauth/token", () => {
  it("issues a bearer token for an hour, with credentials in the form body or in Basic", async () => {
    // Basic at the token endpoint is OAuth's client authentication, whether or not SCIM requests may use Basic.
    const c = await seedClient(t);
    const fromBody = await tokenFor(t, c);
    expect(fromBody.statusCode, fromBody.body).toBe(200);
    expect(fromBody.headers["cache-control"]).toBe("no-store");
    expect(fromBody.headers["content-type"]).toMatch(/^application\/json/);
    expect(fromBody.json()).toMatchObject({ token_type: "Bearer", expires_in: 3600 });
    const token = fromBody.json().access_token as string;
    expect(token).not.toContain(c.secret);
    expect((await users(t, c, `Bearer ${token}`)).statusCode).toBe(200);
    // Any instance verifies it, without the issuing instance's memory.
    expect((await users(other, c, `Bearer ${token}`)).statusCode).toBe(200);

    const fromBasic = await tokenRequest(t, c, { grant_type: "client_credentials" }, basic(c.clientId, c.secret));
    expect(fromBasic.statusCode, fromBasic.body).toBe(200);
    expect((await users(t, c, `Bearer ${fromBasic.json().access_token}`)).statusCode).toBe(200);
  });

  it("expires: the token is refused once expires_in has passed", async () => {
    const c = await seedClient(t);
    const token = await tokenOf(t, c);
    t.clock.advance(3_600_000 - 1_000);
    expect((await users(t, c, `Bearer ${token}`)).statusCode).toBe(200);
    t.clock.advance(1_000);
    const late = await users(t, c, `Bearer ${token}`);
    expect(late.statusCode).toBe(401);
    expect(late.json().detail).toBe("invalid authorization header");
  });

  it("a token of one connection is refused on another, even of the same organization", async () => {
    const a = await seedClient(t);
    const b = await seedClient(t);
    const token = await tokenOf(t, a);
    expect((await users(t, b, `Bearer ${token}`)).statusCode).toBe(401);
  });

  it("answers a wrong secret sent in Basic with 401 and the Basic challenge", async () => {
    const c = await seedClient(t);
    const viaBasic = await tokenRequest(t, c, { grant_type: "client_credentials" }, basic(c.clientId, "nope"));
    expect(viaBasic.statusCode).toBe(401);
    expect(viaBasic.headers["www-authenticate"]).toBe('Basic realm="scim"');
  });

  // Each case's form is built from the calling connection c and another connection d.
  type Form = (c: SeededClient, d: SeededClient) => Record<string, string>;
  it.each<{ name: string; form: Form; inBasicToo?: true; status: number; error: string }>([
    {
      name: "a wrong secret",
      form: (c) => clientCredentials(c.clientId, "nope"),
      status: 401,
      error: "invalid_client",
    },
    {
      name: "another connection's client",
      form: (_c, d) => clientCredentials(d.clientId, d.secret),
      status: 401,
      error: "invalid_client",
    },
    {
      name: "another grant",
      form: (c) => ({ ...clientCredentials(c.clientId, c.secret), grant_type: "password" }),
      status: 400,
      error: "unsupported_grant_type",
    },
    {
      name: "no grant",
      form: (c) => ({ client_id: c.clientId, client_secret: c.secret }),
      status: 400,
      error: "invalid_request",
    },
    {
      name: "credentials both in the form and in Basic",
      form: (c) => clientCredentials(c.clientId, c.secret),
      inBasicToo: true,
      status: 400,
      error: "invalid_request",
    },
  ])("answers RFC 6749 errors: $name", async ({ form, inBasicToo, status, error }) => {
    const c = await seedClient(t);
    const d = await seedClient(t);
    const res = await tokenRequest(t, c, form(c, d), inBasicToo ? basic(c.clientId, c.secret) : undefined);
    expect(res.statusCode).toBe(status);
    expect(res.json().error).toBe(error);
    expect(res.body).not.toContain(c.secret);
  });

  it("a rotated secret stops buying tokens at once; tokens it bought end with its grace period", async () => {
    const c = await seedClient(t);
    const early = await tokenOf(t, c);
    const rotated = await adminCall(t, "POST", `/scimClients/${c.clientId}:rotateSecret`, { grace_period: "600s" });
    const next = rotated.json().secret as string;
    // During the grace period the old secret still buys tokens (the IdP has not switched yet) ...
    const during = await tokenOf(t, c);
    expect((await users(t, c, `Bearer ${early}`)).statusCode).toBe(200);
    expect((await users(t, c, `Bearer ${during}`)).statusCode).toBe(200);
    t.clock.advance(600_000);
    // ... and when it ends, the old secret and every token it bought stop together.
    expect((await users(t, c, `Bearer ${early}`)).statusCode).toBe(401);
    expect((await users(t, c, `Bearer ${during}`)).statusCode).toBe(401);
    const refused = await tokenFor(t, c);
    expect(refused.statusCode).toBe(401);
    expect((await users(t, c, `Bearer ${await tokenOf(t, c, next)}`)).statusCode).toBe(200);
  });

  it("a secret replaced outright revokes its tokens on every instance", async () => {
    const c = await seedClient(t);
    const token = await tokenOf(t, c);
    expect((await users(other, c, `Bearer ${token}`)).statusCode).toBe(200);
    const replaced = await adminCall(t, "PATCH", `/scimClients/${c.clientId}?update_mask=secret`, {
      secret: "a-brand-new-secret-0123456789",
    });
    expect(replaced.statusCode, replaced.body).toBe(200);
    expect((await users(t, c, `Bearer ${token}`)).statusCode).toBe(401);
    // The other instance's cached client holds the old secret for a few seconds at most (the instances share a clock).
    t.clock.advance(10_000);
    expect((await users(other, c, `Bearer ${token}`)).statusCode).toBe(401);
    const refused = await tokenFor(t, c);
    expect(refused.statusCode).toBe(401);
  });

  it("a connection that does not accept client credentials issues nothing and refuses tokens", async () => {
    const c = await seedClient(t);
    const token = await tokenOf(t, c);
    const narrowed = await adminCall(t, "PATCH", `/scimClients/${c.clientId}?update_mask=authentication_methods`, {
      authentication_methods: ["bearer"],
    });
    expect(narrowed.statusCode, narrowed.body).toBe(200);
    expect(narrowed.json().authentication_methods).toEqual(["bearer"]);
    const refused = await tokenFor(t, c);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toBe("unauthorized_client");
    expect((await users(t, c, `Bearer ${token}`)).statusCode).toBe(401);
  });

  it("a connection that accepts only tokens refuses its secret as a bearer value", async () => {
    const c = await seedClient(t, { authentication_methods: ["client_credentials"] });
    expect((await users(t, c, `Bearer ${c.secret}`)).statusCode).toBe(401);
    expect((await users(t, c, `Bearer ${await tokenOf(t, c)}`)).statusCode).toBe(200);
  });
});

describe("the connection's settings and discovery", () => {
  it("the admin API shows the methods, the Basic user name and the token URL", async () => {
    const c = await seedClient(t);
    const got = (await adminCall(t, "GET", `/scimClients/${c.clientId}`)).json();
    expect(got).toMatchObject({
      authentication_methods: ["bearer", "client_credentials"],
      basic_username: c.clientId,
      oauth_token_url: `${got.scim_base_url}/oauth/token`,
      service_provider_config_pagination: true,
    });
  });

  it("refuses an empty, repeated or unknown method list", async () => {
    const c = await seedClient(t);
    for (const methods of [[], ["bearer", "bearer"], ["digest"]]) {
      const res = await adminCall(t, "PATCH", `/scimClients/${c.clientId}?update_mask=authentication_methods`, {
        authentication_methods: methods,
      });
      expect(res.statusCode, JSON.stringify(methods)).toBe(400);
      expect(res.json().error.message).toContain("authentication_methods");
    }
  });

  it("ServiceProviderConfig lists exactly the schemes the connection accepts", async () => {
    const all = await seedClient(t, withBasic);
    const spc =
      (await users(t, all, `Bearer ${all.secret}`)).statusCode === 200 &&
      (await t.request({ method: "GET", url: `${all.base}/ServiceProviderConfig`, headers: all.headers })).json();
    expect(spc.authenticationSchemes.map((s: { type: string }) => s.type)).toEqual(["oauthbearertoken", "httpbasic"]);
    expect(spc.authenticationSchemes[0].description).toContain("/oauth/token");

    const bearerOnly = await seedClient(t, { authentication_methods: ["bearer"] });
    const narrow = (
      await t.request({ method: "GET", url: `${bearerOnly.base}/ServiceProviderConfig`, headers: bearerOnly.headers })
    ).json();
    expect(narrow.authenticationSchemes).toHaveLength(1);
    expect(narrow.authenticationSchemes[0]).toMatchObject({ type: "oauthbearertoken", primary: true });
    expect(narrow.authenticationSchemes[0].description).not.toContain("/oauth/token");
  });

  it("the pagination block can be left out of the ServiceProviderConfig for strict client libraries", async () => {
    const c = await seedClient(t, { service_provider_config_pagination: false });
    const spc = (await t.request({ method: "GET", url: `${c.base}/ServiceProviderConfig`, headers: c.headers })).json();
    expect(spc).not.toHaveProperty("pagination");
    expect(spc.filter).toMatchObject({ supported: true });
    const back = await adminCall(
      t,
      "PATCH",
      `/scimClients/${c.clientId}?update_mask=service_provider_config_pagination`,
      {
        service_provider_config_pagination: true,
      },
    );
    expect(back.statusCode).toBe(200);
    const again = (
      await t.request({ method: "GET", url: `${c.base}/ServiceProviderConfig`, headers: c.headers })
    ).json();
    expect(again.pagination).toMatchObject({ cursor: true, index: true });
  });
});
