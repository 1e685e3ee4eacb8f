import type { MembershipChange } from "../../directory/groups/types.js";
import type { AttributeDefinition } from "../schema/types.js";

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/**
 * A resource as stored: core and common attributes at the top level under their canonical names ("userName",
 * "name": {"givenName"}), each extension's attributes in an object under its schema URN
 * ("urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"department", "manager": {"value"}}).
 * `schemas`, `id` and `meta` may be present and are left alone.
 */
export type ScimObject = JsonObject;

export type FilterValue = string | number | boolean | null;

/** One `subAttr eq value` term of a value filter; several terms are joined by `and`. */
export interface FilterTerm {
  /** Canonical sub-attribute name. */
  readonly attribute: string;
  readonly value: FilterValue;
}

/** RFC 7644 §3.5.2: PATH = attrPath / valuePath [subAttr], resolved against the registry. */
export interface PatchPath {
  /** Canonical schema URN. */
  readonly schema: string;
  /** Canonical attribute name, e.g. "emails" (never dotted). */
  readonly attribute: string;
  readonly definition: AttributeDefinition;
  readonly filter?: readonly FilterTerm[];
  /** Canonical sub-attribute name, e.g. "value" in `emails[type eq "work"].value` or "givenName" in `name.givenName`. */
  readonly sub?: string;
  readonly subDefinition?: AttributeDefinition;
}

export interface MemberRef {
  /** Lower-cased UUID of the user or group. */
  readonly value: string;
  /** Absent when the IdP omitted it (spec R1: inferred by the groups service). */
  readonly type?: "User" | "Group";
}

/** Membership changes for a set-based writer; the engine never materialises the member list. */
export type MemberOp = MembershipChange;

export interface PatchResult {
  /** The patched resource (for Groups: without members). */
  readonly resource: ScimObject;
  /** False when neither the attributes nor membership were asked to change. */
  readonly changed: boolean;
  /** Membership operations in request order (Groups only; absent when there are none). */
  readonly members?: readonly MemberOp[];
}

export type PatchOpName = "add" | "replace" | "remove";
