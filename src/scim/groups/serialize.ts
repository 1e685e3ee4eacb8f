import type { Group } from "../../directory/groups/types.js";
import { etagOf } from "../etag.js";
import type { ScimObject } from "../patch/types.js";
import { type Projection, project } from "../query/projection.js";
import { RawJson } from "../raw-json.js";
import { CORE_REGISTRY, GROUP_SCHEMA, type SchemaRegistry } from "../schema/registry.js";
import { hiddenOf } from "../users/extension-render.js";
import { shownExtensions } from "./extensions.js";
import type { MemberFields } from "./members.js";

/**
 * The group's own attributes, the extension objects the client sees (their URNs in `schemas`) and meta;
 * `members` is a placeholder the caller fills with RawJson.
 */
const groupObject = (group: Group, baseUrl: string, shown: readonly [string, unknown][]): Record<string, unknown> => ({
  schemas: shown.length === 0 ? [GROUP_SCHEMA] : [GROUP_SCHEMA, ...shown.map(([urn]) => urn)],
  id: group.id,
  ...(group.externalId === null ? {} : { externalId: group.externalId }),
  displayName: group.displayName,
  members: [],
  ...(shown.length === 0 ? {} : Object.fromEntries(shown)),
  meta: {
    resourceType: "Group",
    created: group.createdAt.toISOString(),
    lastModified: group.updatedAt.toISOString(),
    location: groupLocation(baseUrl, group.id),
    version: etagOf(group.version),
  },
});

export const groupLocation = (baseUrl: string, id: string): string => `${baseUrl}/Groups/${id}`;

const SAMPLE_MEMBER = { value: "", display: "", type: "", $ref: "" };

/**
 * Which member sub-attributes the projection returns, or undefined when it returns no members at all — then the
 * member rows are not read (Entra asks with `excludedAttributes=members` and `attributes=displayName`).
 */
export function memberFieldsOf(projection: Projection): MemberFields | undefined {
  const sample = project("Group", { id: "", schemas: [], members: [SAMPLE_MEMBER] }, projection);
  const members = sample.members;
  if (!Array.isArray(members)) return undefined;
  const kept: unknown = members[0] ?? {};
  const has = (name: string) => typeof kept === "object" && kept !== null && name in kept;
  return { value: has("value"), display: has("display"), type: has("type"), ref: has("$ref") };
}

/**
 * The Group resource under a projection (RFC 7644 §3.9). `members` is the JSON text of the member list (memberList;
 * "[]" for none), or undefined when the projection leaves members out.
 */
export function renderGroup(
  group: Group,
  baseUrl: string,
  projection: Projection,
  members: string | undefined,
  registry: SchemaRegistry = CORE_REGISTRY,
): Record<string, unknown> {
  const shown = shownExtensions(group, registry);
  const whole = groupObject(group, baseUrl, shown);
  // Declared attributes returned "never" (or "request", unless asked for) are left out (RFC 7643 §7).
  if (shown.length > 0) hiddenOf(registry, whole, projection, "Group");
  const projected = project("Group", whole, projection, registry);
  if ("members" in projected) {
    // As for a User's multi-valued attributes, none is left out — unless the client asked for members by name.
    const none = members === undefined || (EMPTY_LIST.test(members) && !asksForMembers(projection));
    if (none) delete projected.members;
    else projected.members = new RawJson(members);
  }
  return projected;
}

const EMPTY_LIST = /^\s*\[\s*\]\s*$/;
const MEMBERS = /^(urn:ietf:params:scim:schemas:core:2\.0:group:)?members(\.|$)/i;

/** `attributes=members` (or `members.value`, or URN-qualified) names the attribute: then `[]` is the answer. */
const asksForMembers = (projection: Projection): boolean =>
  (projection.attributes ?? []).some((name) => MEMBERS.test(name.trim()));

/**
 * The group as the PATCH engine sees it: attributes without members (they change through MemberOps), and the
 * extension objects the client governs (`own`, see splitExtensions).
 */
export const patchableGroup = (group: Group, own?: Record<string, unknown>): ScimObject => {
  const core: ScimObject = {
    schemas: [GROUP_SCHEMA],
    id: group.id,
    ...(group.externalId === null ? {} : { externalId: group.externalId }),
    displayName: group.displayName,
  };
  if (own === undefined || Object.keys(own).length === 0) return core;
  return { ...core, schemas: [GROUP_SCHEMA, ...Object.keys(own)], ...(own as ScimObject) };
};
