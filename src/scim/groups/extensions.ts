import type { Group, GroupExtensions } from "../../directory/groups/types.js";
import type { JsonObject } from "../patch/types.js";
import { collectExtension, extensionInput, writeExtensions } from "../schema/extension-input.js";
import { CORE_REGISTRY, GROUP_SCHEMA, type SchemaRegistry } from "../schema/registry.js";
import { checkExtensionRules, checkImmutable, storedVerbatim } from "../users/extension-rules.js";
import { splitForeign } from "../users/foreign-extensions.js";

type Json = Record<string, unknown>;

const NONE = { own: {}, foreign: {} } as const;
const GROUP_PREFIX = `${GROUP_SCHEMA.toLowerCase()}:`;

/**
 * A stored group's extension objects split into those this client's registry governs (declared, or any when it
 * stores unknown extensions) and another client's, which it neither sees nor changes (docs/scim-extensions.md).
 */
export const splitExtensions = (group: Group, registry: SchemaRegistry): { own: Json; foreign: Json } =>
  group.extensions === null ? NONE : splitForeign(group.extensions, registry);

/**
 * The extension part of a Group body or patched document, validated through the client's registry as a User's
 * is: typed, required extensions and attributes present, dateTimes checked, undeclared URNs kept verbatim when the
 * client stores them. Null when there is none (and always for a client without extensions: nothing to keep).
 */
export function groupExtensionsOf(source: Json, registry: SchemaRegistry): GroupExtensions | null {
  if (registry === CORE_REGISTRY) return null;
  const input = extensionInput(registry, "Group");
  for (const [key, value] of Object.entries(source)) {
    const k = key.toLowerCase();
    if (!k.startsWith("urn:") || k === GROUP_SCHEMA.toLowerCase() || k.startsWith(GROUP_PREFIX)) continue;
    collectExtension(input, key, value);
  }
  const scim: JsonObject = { schemas: [GROUP_SCHEMA] };
  writeExtensions(input, scim);
  checkExtensionRules(registry, scim, "Group");
  storedVerbatim(scim, input.verbatim);
  const { schemas: _urns, ...objects } = scim;
  return Object.keys(objects).length === 0 ? null : objects;
}

/**
 * What a PUT or PATCH stores: the client's validated objects (`own`) and another client's as they were. An
 * `immutable` attribute that has a value keeps it (400 mutability).
 */
export function extensionsToStore(
  own: GroupExtensions | null,
  current: Group,
  registry: SchemaRegistry,
): GroupExtensions | null {
  const before = splitExtensions(current, registry);
  checkImmutable(registry, before.own as JsonObject, (own ?? {}) as JsonObject, "Group");
  const merged = { ...(own ?? {}), ...before.foreign };
  return Object.keys(merged).length === 0 ? null : merged;
}

/**
 * The extension objects of a group this client sees, in response order: declared ones in registry order, then
 * the ones kept verbatim as stored.
 */
export function shownExtensions(group: Group, registry: SchemaRegistry): readonly [string, unknown][] {
  if (registry === CORE_REGISTRY || group.extensions === null) return [];
  const { own } = splitExtensions(group, registry);
  const order = registry.schemasFor("Group").map((s) => s.id);
  const rank = (urn: string) => {
    const i = order.indexOf(urn);
    return i < 0 ? order.length : i;
  };
  return Object.entries(own).sort(([a], [b]) => rank(a) - rank(b));
}
