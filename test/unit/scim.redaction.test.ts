import { describe, expect, it } from "vitest";
import { loggedRequestBody, loggedResponseBody, redactQuery } from "../../src/observability/redact.js";
import { isSecretKey, REDACTED, redactHeaders, redactText } from "../../src/platform/redact.js";
import { SCIM_REDACTOR } from "../../src/scim/redact.js";

const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const EXT = "urn:example:vault:1.0:User";
const S = "S3cr3t-value";
const patch = (...operations: unknown[]) => ({ schemas: [PATCH_OP], Operations: operations });
const core = { clientId: "c", organizationId: "o", extensions: [], unknownExtensions: "reject" };
/** A string attribute of an extension as the registry stores it, differing only in when it is returned. */
const stringAttribute = (name: string, returned: string) => ({
  name,
  type: "string",
  multiValued: false,
  description: "",
  required: false,
  caseExact: false,
  mutability: "readWrite",
  returned,
  uniqueness: "none",
});
const vault = {
  ...core,
  extensions: [
    {
      resource: "User",
      schema: EXT,
      name: "Vault",
      description: "",
      required: false,
      attributes: [stringAttribute("pin", "never"), stringAttribute("site", "default")],
    },
  ],
};
const logged = (client: object, url: string, body: unknown) =>
  loggedRequestBody(body, { client, url, redactor: SCIM_REDACTOR }).text ?? "";

describe("SCIM request log redaction", () => {
  it.each([
    ["Value key", patch({ op: "replace", path: "password", Value: S })],
    ["PATH and VALUE", patch({ OP: "Replace", PATH: "PASSWORD", VALUE: S })],
    ["trailing whitespace", patch({ op: "replace", path: "password \t", value: S })],
    ["an upper-case URN", patch({ op: "replace", path: `${USER.toUpperCase()}:Password`, value: S })],
    ["pathless", patch({ op: "replace", value: { " password ": S } })],
    ["pathless URN key", patch({ op: "replace", value: { [`${USER}:password`]: S } })],
    ["core URN path", patch({ op: "replace", path: USER, value: { PassWord: S } })],
    ["two paths, the second secret", patch({ op: "replace", path: "displayName", PATH: "password", value: S })],
    ["unparsable secret path", patch({ op: "replace", path: "password[x", value: S })],
    ["bulk POST", { Operations: [{ method: "POST", path: "/Users", data: { userName: "u", Password: S } }] }],
    [
      "bulk PATCH",
      { Operations: [{ method: "PATCH", path: "/Users/1", data: patch({ op: "add", path: "password ", value: S }) }] },
    ],
    ["a resource", { schemas: [USER], userName: "u", password: S }],
    ["a nested password anywhere", { userName: "u", foo: [{ bar: { PASSWORD: S } }] }],
  ])("hides the password: %s", (_name, body) => {
    const text = logged(core, "/scim/c/v2/Users/1", body);
    expect(text).not.toContain(S);
    expect(text).toContain(REDACTED);
  });

  it.each([
    ["path", patch({ op: "replace", path: `${EXT}:pin`, value: S })],
    ["path in other case", patch({ op: "replace", path: ` ${EXT.toUpperCase()}:PIN`, value: S })],
    ["unqualified path", patch({ op: "replace", path: "pin", value: S })],
    ["URN-keyed object", patch({ op: "replace", value: { [EXT]: { Pin: S, site: "kept" } } })],
    ["extension path", patch({ op: "replace", path: EXT, value: { pin: S, site: "kept" } })],
    ["a resource", { schemas: [USER, EXT], userName: "u", [EXT]: { pin: S, site: "kept" } }],
  ])("hides an extension attribute returned never: %s", (_name, body) => {
    const text = logged(vault, "/scim/c/v2/Users/1", body);
    expect(text).not.toContain(S);
  });

  it("reads a Groups URL's bodies against the Group schema and its extensions", () => {
    const GROUP_EXT = "urn:example:vault:1.0:Group";
    const [pin] = vault.extensions[0]?.attributes ?? [];
    const groups = {
      ...core,
      extensions: [
        {
          resource: "Group",
          schema: GROUP_EXT,
          name: "G",
          description: "",
          required: false,
          attributes: [{ ...pin, name: "note" }],
        },
      ],
    };
    for (const body of [
      patch({ op: "add", path: `${GROUP_EXT}:Note `, value: S }),
      patch({ op: "add", value: { [GROUP_EXT]: { note: S } } }),
      { displayName: "g", [GROUP_EXT]: { note: S } },
    ]) {
      expect(logged(groups, "/scim/c/v2/Groups/1", body)).not.toContain(S);
    }
    const members = patch({ op: "add", path: "members", value: [{ value: "kept-member" }] });
    expect(logged(groups, "/scim/c/v2/Groups/1", members)).toContain("kept-member");
  });

  it("keeps what is not secret, including values that merely look alike", () => {
    const body = patch(
      { op: "replace", path: 'emails[type eq "work"].value', value: "kept@example.com" },
      { op: "replace", path: "displayName", value: "Password Reset Team" },
      { op: "replace", path: `${EXT}:site`, value: "kept-site" },
    );
    const text = logged(vault, "/scim/c/v2/Users/1", body);
    for (const kept of ["kept@example.com", "Password Reset Team", "kept-site"]) expect(text).toContain(kept);
  });

  it("keeps a body without a suspect word as it was sent (no copy, no walk)", () => {
    const body = patch({ op: "replace", path: "name.givenName", value: "Ada" });
    expect(logged(core, "/scim/c/v2/Users/1", body)).toBe(JSON.stringify(body));
  });

  it("redacts a response body by the same rules", () => {
    const payload = JSON.stringify({ Resources: [{ userName: "u", password: S }] });
    const text = loggedResponseBody(payload, { client: core, url: "/scim/c/v2/Users", redactor: SCIM_REDACTOR }).text;
    expect(text).not.toContain(S);
  });
});

describe("redaction primitives", () => {
  it.each([
    ["password", true],
    [" PassWord ", true],
    ["client_secret", true],
    ["access_token", true],
    ["\u212Aey", true],
    ["Set-Cookie", true],
    ["userName", false],
    ["displayName", false],
    ["value", false],
  ])("isSecretKey(%j) is %s", (key, secret) => {
    expect(isSecretKey(key)).toBe(secret);
  });

  it.each([
    [
      "filter=userName%20eq%20%22a%22&access_token=xyz&count=2",
      "filter=userName%20eq%20%22a%22&access_token=[redacted]&count=2",
    ],
    ["ACCESS_TOKEN=xyz", "ACCESS_TOKEN=[redacted]"],
    ["access_token%20=xyz", "access_token%20=[redacted]"],
    [`filter=${encodeURIComponent('password eq "xyz"')}`, `filter=${encodeURIComponent('password eq "[redacted]"')}`],
  ])("redactQuery(%s)", (query, expected) => {
    expect(redactQuery(query)).toBe(expected);
  });

  it.each([
    ["db_password=hunter2&x=1", "hunter2"],
    ['{"message":"db_password=hunter2"}', "hunter2"],
    ['{"token":"abc123"}', "abc123"],
    ["Authorization: Bearer abc.def", "abc.def"],
    ['{"secret": "cut-sho', "cut-sho"],
    ["api_key: 'k-1'", "k-1"],
  ])("redactText(%s) hides the secret", (text, secret) => {
    expect(redactText(text)).not.toContain(secret);
  });

  it("redactText keeps text without secrets as it is", () => {
    expect(redactText("OK: delivered")).toBe("OK: delivered");
  });

  it("redactHeaders hides credential headers, keeps signatures", () => {
    expect(
      redactHeaders({ Cookie: "a=b", "webhook-signature": "v1,abc", "X-Api-Key": "k", "set-cookie": "s" }),
    ).toEqual({
      Cookie: REDACTED,
      "webhook-signature": "v1,abc",
      "X-Api-Key": REDACTED,
      "set-cookie": REDACTED,
    });
  });
});
