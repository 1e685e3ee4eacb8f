import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ScimError } from "../../src/scim/errors.js";
import { applyPatch } from "../../src/scim/patch/apply.js";
import { PATCH_OP_SCHEMA } from "../../src/scim/render.js";
import type { JsonValue, ScimObject } from "../../src/scim/patch/types.js";
import { ENTERPRISE_USER_SCHEMA } from "../../src/scim/schema/registry.js";
import { scimErrorOf } from "../helpers/errors.js";
import { LIST_RESPONSE, USER_SCHEMA } from "../helpers/constants.js";

interface PatchCase {
  readonly name: string;
  readonly resource: "User" | "Group";
  readonly current: ScimObject;
  readonly operations: JsonValue[];
  readonly expected?: { readonly resource: ScimObject; readonly changed: boolean; readonly members?: JsonValue[] };
  readonly error?: { readonly status: number; readonly scimType: string | null };
}

const fixture = JSON.parse(readFileSync(new URL("../fixtures/patch-cases.json", import.meta.url), "utf8")) as {
  cases: PatchCase[];
};

const message = (operations: unknown): unknown => ({ schemas: [PATCH_OP_SCHEMA], Operations: operations });

const patchErrorOf = (run: () => unknown): ScimError =>
  scimErrorOf(run, "expected a ScimError, but the patch succeeded");

const USER: ScimObject = { id: "2819c223-7f76-453a-919d-413861904646", userName: "bjensen", active: true };

describe("applyPatch fixture cases", () => {
  const successes = fixture.cases.filter((c) => c.expected !== undefined);
  const failures = fixture.cases.filter((c) => c.error !== undefined);

  it("has both kinds of cases", () => {
    expect(successes.length).toBeGreaterThan(40);
    expect(failures.length).toBeGreaterThan(20);
  });

  it.each(successes.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const result = applyPatch(c.resource, c.current, message(c.operations));
    expect(result.resource).toEqual(c.expected?.resource);
    expect(result.changed).toBe(c.expected?.changed);
    expect(result.members).toEqual(c.expected?.members);
  });

  it.each(failures.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const before = structuredClone(c.current);
    const error = patchErrorOf(() => applyPatch(c.resource, c.current, message(c.operations)));
    expect({ status: error.status, scimType: error.scimType ?? null }).toEqual(c.error);
    expect(error.detail).toEqual(expect.any(String));
    expect(c.current).toEqual(before);
  });
});

describe("applyPatch message validation", () => {
  it.each<[string, unknown]>([
    ["not an object", []],
    ["missing schemas", { Operations: [{ op: "add", path: "title", value: "x" }] }],
    ["wrong schema", { schemas: [LIST_RESPONSE], Operations: [] }],
    ["missing Operations", { schemas: [PATCH_OP_SCHEMA] }],
    ["empty Operations", message([])],
    ["Operations not an array", message({ op: "add" })],
    ["operation not an object", message(["add"])],
    ["op missing", message([{ path: "title", value: "x" }])],
  ])("%s → 400 invalidSyntax", (_name, body) => {
    const error = patchErrorOf(() => applyPatch("User", USER, body));
    expect([error.status, error.scimType]).toEqual([400, "invalidSyntax"]);
  });

  it("accepts the schema URN and member names in any case", () => {
    const body = {
      SCHEMAS: [PATCH_OP_SCHEMA.toUpperCase()],
      operations: [{ OP: "replace", Path: "title", Value: "x" }],
    };
    expect(applyPatch("User", USER, body).resource.title).toBe("x");
  });

  it("rejects a non-string path with invalidPath", () => {
    const error = patchErrorOf(() => applyPatch("User", USER, message([{ op: "add", path: 3, value: "x" }])));
    expect([error.status, error.scimType]).toEqual([400, "invalidPath"]);
  });
});

describe("applyPatch results", () => {
  it("never mutates the input, even when it succeeds", () => {
    const current: ScimObject = { ...USER, emails: [{ value: "a@w", type: "work" }] };
    const before = structuredClone(current);
    const result = applyPatch(
      "User",
      current,
      message([{ op: "add", path: 'emails[type eq "work"].display', value: "W" }]),
    );
    expect(current).toEqual(before);
    expect(result.resource.emails).toEqual([{ value: "a@w", type: "work", display: "W" }]);
  });

  it("leaves a partially applied request invisible when a later operation fails", () => {
    const current: ScimObject = { ...USER };
    expect(() =>
      applyPatch("User", current, message([{ op: "replace", path: "active", value: false }, { op: "remove" }])),
    ).toThrow(ScimError);
    expect(current.active).toBe(true);
  });

  it("normalises stored key spelling without reporting a change", () => {
    const current: ScimObject = { UserName: "bjensen", NAME: { GivenName: "B" } };
    const result = applyPatch("User", current, message([{ op: "replace", path: "name.givenName", value: "B" }]));
    expect(result.changed).toBe(false);
    expect(result.resource).toEqual({ userName: "bjensen", name: { givenName: "B" } });
  });

  it("keeps a set password in the resource for the caller to strip", () => {
    const result = applyPatch("User", USER, message([{ op: "add", path: "password", value: "s3cret!" }]));
    expect(result.resource.password).toBe("s3cret!");
    expect(result.changed).toBe(true);
  });

  it("keeps unknown stored keys and id/meta untouched", () => {
    const current: ScimObject = { ...USER, meta: { resourceType: "User" }, schemas: ["x"], custom: 1 };
    const result = applyPatch("User", current, message([{ op: "replace", path: "title", value: "T" }]));
    expect(result.resource).toEqual({ ...current, title: "T" });
  });

  it("adds the enterprise URN to schemas only when the extension appears", () => {
    const current: ScimObject = { ...USER, schemas: [USER_SCHEMA] };
    const added = applyPatch("User", current, message([{ op: "add", path: "department", value: "D" }]));
    expect(added.resource.schemas).toEqual(["urn:ietf:params:scim:schemas:core:2.0:User", ENTERPRISE_USER_SCHEMA]);
    expect(added.resource[ENTERPRISE_USER_SCHEMA]).toEqual({ department: "D" });
    const untouched = applyPatch("User", current, message([{ op: "add", path: "title", value: "T" }]));
    expect(untouched.resource.schemas).toEqual(["urn:ietf:params:scim:schemas:core:2.0:User"]);
  });

  it("does not materialise group members and reports member ops as a change", () => {
    const current: ScimObject = { id: "g", displayName: "Eng" };
    const result = applyPatch(
      "Group",
      current,
      message([{ op: "add", path: "members", value: [{ value: "6C1F7C3E-2F7A-4C1E-9D0B-6A1F0D7B8E21" }] }]),
    );
    expect(result.resource).toEqual(current);
    expect(result.resource.members).toBeUndefined();
    expect(result.changed).toBe(true);
    expect(result.members).toEqual([{ kind: "add", members: [{ value: "6c1f7c3e-2f7a-4c1e-9d0b-6a1f0d7b8e21" }] }]);
  });

  it("omits members when a group patch has no membership operation", () => {
    const result = applyPatch(
      "Group",
      { displayName: "Eng" },
      message([{ op: "replace", path: "displayName", value: "X" }]),
    );
    expect(Object.hasOwn(result, "members")).toBe(false);
  });

  it("names the offending member in the error detail", () => {
    const error = patchErrorOf(() =>
      applyPatch("Group", { displayName: "Eng" }, message([{ op: "add", path: "members", value: [{ value: "u-1" }] }])),
    );
    expect(error.detail).toContain("u-1");
    expect(error.detail).toContain("UUID");
  });
});
