import { describe, expect, it } from "vitest";
import { adminOperation, scimOperation } from "../../src/observability/operation.js";
import {
  loggedRequestBody,
  loggedResponseBody,
  MAX_LOGGED_BODY_BYTES,
  redactQuery,
} from "../../src/observability/redact.js";

describe("operation names", () => {
  it.each([
    ["POST", "/scim/:clientId/v2/Users", "users.create"],
    ["GET", "/scim/:clientId/v2/Users", "users.list"],
    ["GET", "/scim/:clientId/v2/Users/:id", "users.get"],
    ["PUT", "/scim/:clientId/v2/Users/:id", "users.replace"],
    ["PATCH", "/scim/:clientId/v2/Groups/:id", "groups.patch"],
    ["DELETE", "/scim/:clientId/v2/Groups/:id", "groups.delete"],
    ["GET", "/scim/:clientId/v2/ServiceProviderConfig", "discovery.serviceproviderconfig"],
    ["GET", "/scim/:clientId/v2/Schemas/:id", "discovery.schemas"],
    ["GET", undefined, "unmatched"],
  ])("SCIM %s %s → %s", (method, url, name) => {
    expect(scimOperation(method, url)).toBe(name);
  });
  it.each([
    ["POST", "/v2alpha1/admin/organizations", "organizations.create"],
    ["PATCH", "/v2alpha1/admin/scimClients/:clientId", "scimClients.update"],
    ["GET", "/v2alpha1/admin/scimClients/:clientId/requests", "scimClients.requests.list"],
    ["GET", "/v2alpha1/admin/scimClients/:clientId/requests/:id", "scimClients.requests.get"],
    ["POST", "/v2alpha1/admin/importedApiKeys::batchCreate", "importedApiKeys.batchCreate"],
    ["POST", "/v2alpha1/admin/issuedApiKeys/:keyId([^:/]+)::rotate", "issuedApiKeys.rotate"],
  ])("admin %s %s → %s", (method, url, name) => {
    expect(adminOperation(method, url)).toBe(name);
  });
});

describe("redaction", () => {
  it("hides passwords by key and by PATCH path, and secret-named keys anywhere", () => {
    const body = {
      password: "a",
      nested: { client_secret: "b", token: "c", Authorization: "d", userName: "kept" },
      Operations: [
        { op: "replace", path: "password", value: "e" },
        { op: "replace", path: "urn:ietf:params:scim:schemas:core:2.0:User:password", value: "f" },
        { op: "replace", path: 'emails[type eq "work"].value', value: "kept@example.com" },
      ],
    };
    const text = loggedRequestBody(body).text ?? "";
    for (const secret of ['"a"', '"b"', '"c"', '"d"', '"e"', '"f"']) expect(text).not.toContain(secret);
    expect(text).toContain("kept@example.com");
    expect(text).toContain('"userName":"kept"');
  });
  it("keeps a response without secret-named keys as sent, and redacts one with them", () => {
    const plain = '{"id":"1","userName":"x"}';
    expect(loggedResponseBody(plain).text).toBe(plain);
    expect(loggedResponseBody('{"secret":"s3"}').text).toBe('{"secret":"[redacted]"}');
    expect(loggedResponseBody("password=oops").text).toBe("[redacted]");
  });
  it("cuts a body at 64 KiB and flags it", () => {
    const logged = loggedRequestBody({ displayName: "é".repeat(MAX_LOGGED_BODY_BYTES) });
    expect(logged.truncated).toBe(true);
    expect(Buffer.byteLength(logged.text ?? "", "utf8")).toBeLessThanOrEqual(MAX_LOGGED_BODY_BYTES);
  });
  it("redacts secret query parameters only", () => {
    expect(redactQuery("filter=userName%20eq%20%22a%22&access_token=xyz&count=2")).toBe(
      "filter=userName%20eq%20%22a%22&access_token=[redacted]&count=2",
    );
  });
});
