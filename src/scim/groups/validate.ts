import type { GroupExtensions, GroupInput, GroupPatch, MembershipChange } from "../../directory/groups/types.js";
import { badRequest } from "../errors.js";
import { findKey, isObject } from "../patch/json.js";
import { memberRefs } from "../patch/members.js";
import type { MemberOp, ScimObject } from "../patch/types.js";
import {
  CORE_REGISTRY,
  extensionSchemasOf,
  GROUP_SCHEMA,
  resolveAttribute,
  type SchemaRegistry,
  splitSchemaPrefix,
} from "../schema/registry.js";
import { groupExtensionsOf } from "./extensions.js";
import type { AttributeDefinition } from "../schema/types.js";
import { withinMaxLength } from "../patch/values.js";

/** Entra adds this URN to every group it creates; it carries no attributes we keep. */
export const ENTRA_GROUP_SCHEMA = "http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group";

const TOLERATED_SCHEMAS = new Set([GROUP_SCHEMA.toLowerCase(), ENTRA_GROUP_SCHEMA.toLowerCase()]);

const get = (body: Record<string, unknown>, name: string): unknown => {
  const key = findKey(body as ScimObject, name);
  return key === undefined ? undefined : body[key];
};

const definitionOf = (name: string): AttributeDefinition => {
  const resolved = resolveAttribute("Group", name);
  if (resolved === undefined) throw new Error(`the Group schema has no ${name}`);
  return resolved.attribute;
};
const DISPLAY_NAME = definitionOf("displayName");
const EXTERNAL_ID = definitionOf("externalId");

/** `displayName` is required (a missing required attribute is invalidSyntax). */
export const displayNameOf = (raw: unknown): string => {
  if (raw === undefined || raw === null) throw badRequest("invalidSyntax", "displayName is required");
  if (typeof raw !== "string" || raw.trim() === "") {
    throw badRequest("invalidValue", "displayName must be a non-empty string");
  }
  return withinMaxLength(DISPLAY_NAME, raw, "displayName");
};

/** externalId is optional; null and "" leave it unassigned (RFC 7644 §3.5.2). */
export const externalIdOf = (raw: unknown): string | null => {
  if (raw === undefined || raw === null || raw === "") return null;
  if (typeof raw !== "string") throw badRequest("invalidValue", "externalId must be a string");
  return withinMaxLength(EXTERNAL_ID, raw, "externalId");
};

/** A URN the client may use on a Group: the Group's own and Entra's, its declared Group extensions, any it stores. */
const allowedUrn = (urn: string, registry: SchemaRegistry): boolean => {
  const lower = urn.toLowerCase();
  if (TOLERATED_SCHEMAS.has(lower)) return true;
  if (registry === CORE_REGISTRY || !lower.startsWith("urn:")) return false;
  if (registry.storeUnknown) return true;
  const schema = registry.findSchema(urn) ?? registry.findSchema(splitSchemaPrefix(urn).urn ?? "");
  return (
    schema !== undefined && schema.id !== GROUP_SCHEMA && extensionSchemasOf("Group", registry).includes(schema.id)
  );
};

/** RFC 7643 §3: the resource's schemas; unknown URNs (as schemas or as extension keys) are refused. */
const checkSchemas = (body: Record<string, unknown>, registry: SchemaRegistry): void => {
  const schemas = get(body, "schemas");
  if (schemas !== undefined) {
    if (!Array.isArray(schemas) || !schemas.every((s) => typeof s === "string")) {
      throw badRequest("invalidSyntax", "schemas must be an array of schema URNs");
    }
    const unknown = schemas.find((s: string) => !allowedUrn(s, registry));
    if (unknown !== undefined) throw badRequest("invalidSyntax", `unsupported schema ${unknown} for a Group`);
    if (!schemas.some((s: string) => s.toLowerCase() === GROUP_SCHEMA.toLowerCase())) {
      throw badRequest("invalidSyntax", `schemas must contain ${GROUP_SCHEMA}`);
    }
  }
  for (const key of Object.keys(body)) {
    if (/^urn:|^https?:\/\//i.test(key) && !allowedUrn(key, registry)) {
      throw badRequest("invalidSyntax", `unsupported schema ${key} for a Group`);
    }
  }
};

/**
 * The body of POST and PUT /Groups. Read-only `id` and `meta` are ignored (Okta's PUT sends them;
 * they are read-only), as are members' `display` and `$ref`; member values and types are checked by the PATCH engine's
 * member parser so both paths agree.
 */
export function parseGroupBody(body: unknown, registry: SchemaRegistry = CORE_REGISTRY): GroupInput {
  if (!isObject(body)) throw badRequest("invalidSyntax", "the request body must be a Group resource (a JSON object)");
  checkSchemas(body, registry);
  const members = get(body, "members");
  if (members !== undefined && members !== null && !Array.isArray(members)) {
    throw badRequest("invalidSyntax", "members must be an array");
  }
  return {
    displayName: displayNameOf(get(body, "displayName")),
    externalId: externalIdOf(get(body, "externalId")),
    members: memberRefs(members),
    extensions: groupExtensionsOf(body, registry),
  };
}

/**
 * The patched group (applyPatch output, members excluded) as the domain's change; `extensions` are what to store
 * (see extensionsToStore), undefined to leave them as they are.
 */
export function groupPatchOf(
  resource: ScimObject,
  members: readonly MemberOp[] | undefined,
  extensions?: GroupExtensions | null,
): GroupPatch {
  const membership: readonly MembershipChange[] = members ?? [];
  return {
    displayName: displayNameOf(resource.displayName),
    externalId: externalIdOf(resource.externalId),
    membership,
    ...(extensions === undefined ? {} : { extensions }),
  };
}
