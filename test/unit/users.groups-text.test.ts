import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { scimGroups, splitSchemas } from "../../src/scim/users/render-text.js";

const tricky = fc.oneof(
  fc.string(),
  fc.constantFrom('},{"id":"', '"}]', "\\", '\\"},{"id":"x', "{}", ',"type":"direct"}', "\u2028"),
);
const group = fc.record({ id: fc.uuid(), display: tricky });

describe("scimGroups: the record's memberships as the SCIM groups array", () => {
  it("equals mapping the parsed memberships, whatever the display names hold", () => {
    fc.assert(
      fc.property(fc.array(group, { minLength: 1, maxLength: 6 }), (groups) => {
        const text = scimGroups(groups.map((g) => ({ groupId: g.id, displayName: g.display })));
        expect(JSON.parse(text)).toEqual(groups.map((g) => ({ value: g.id, display: g.display, type: "direct" })));
      }),
    );
  });
});

describe("splitSchemas", () => {
  it("cuts the schemas array out of jsonb's text", () => {
    const text = '{"name": {"givenName": "A"}, "active": true, "schemas": ["urn:a", "urn:b"], "userName": "u"}';
    const split = splitSchemas(text);
    expect(split?.schemas).toBe('["urn:a", "urn:b"]');
    expect(JSON.parse(split?.body ?? "")).toEqual({ name: { givenName: "A" }, active: true, userName: "u" });
  });

  it("refuses a document whose schemas array is not plain strings", () => {
    expect(splitSchemas('{"schemas": ["urn:a", 1], "userName": "u"}')).toBeUndefined();
    expect(splitSchemas('{"userName": "u"}')).toBeUndefined();
  });
});
