import { describe, expect, it } from "vitest";
import type { ScimClient } from "../../src/directory/scim-clients/types.js";
import { authenticateAtOnce, VERIFY_TOKEN } from "../../src/scim/auth/authenticate.js";
import { type Presented, presentedCredentials } from "../../src/scim/auth/credentials.js";

const client = (authMethods: ScimClient["authMethods"]) => ({ clientId: "okta", authMethods }) as ScimClient;
const ALL: ScimClient["authMethods"] = ["bearer", "basic", "client_credentials"];
/** The client's current secret is "s3cret", its previous one "old". */
const match = (_c: ScimClient, presented: string) =>
  presented === "s3cret" ? "current" : presented === "old" ? "previous" : undefined;
const basic = (user: string, password: string): Presented =>
  presentedCredentials(`Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`);
const TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJva3RhIn0.c2lnbmF0dXJl";

describe("authenticateAtOnce: what needs nothing awaited is decided at once", () => {
  it.each([
    ["the current secret as a bearer value", ALL, presentedCredentials("Bearer s3cret"), "current"],
    ["the previous secret as a bearer value", ALL, presentedCredentials("Bearer old"), "previous"],
    ["a wrong bearer value", ALL, presentedCredentials("Bearer nope"), undefined],
    ["a bearer value for a client without bearer", ["basic"], presentedCredentials("Bearer s3cret"), undefined],
    ["Basic with the client id and the current secret", ALL, basic("okta", "s3cret"), "current"],
    ["Basic with the client id and the previous secret", ALL, basic("okta", "old"), "previous"],
    ["Basic with another user name", ALL, basic("other", "s3cret"), undefined],
    ["Basic for a client that accepts bearer only", ["bearer"], basic("okta", "s3cret"), undefined],
    ["an access token for a client that accepts them", ALL, presentedCredentials(`Bearer ${TOKEN}`), VERIFY_TOKEN],
    ["an access token for a client that does not", ["bearer"], presentedCredentials(`Bearer ${TOKEN}`), undefined],
  ] as const)("%s", (_name, methods, presented, expected) => {
    expect(authenticateAtOnce(client(methods), presented, match)).toBe(expected);
  });
});
