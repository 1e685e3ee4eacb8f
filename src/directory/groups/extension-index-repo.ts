import type { Transaction } from "kysely";
import { isUniqueViolation } from "../../storage/errors.js";
import type { Database } from "../../storage/schema.js";
import { GROUP_EXTENSION_INDEX, replaceIndexedValues } from "../extension-index-repo.js";
import { extensionValuesOf, sameExtensionValues } from "../identities/extension-values.js";
import { type IndexedAttribute, indexedAttributesOf } from "../scim-clients/extensions.js";
import type { ScimClient } from "../scim-clients/types.js";
import { GroupError } from "./errors.js";
import { GROUP_EXTENSION_UNIQUE_KEY } from "./repo.js";
import type { Group, GroupExtensions } from "./types.js";

const NONE: readonly IndexedAttribute[] = [];
const indexedOf = new WeakMap<ScimClient, readonly IndexedAttribute[]>();

/** The Group extension attributes a client indexes (filterable or unique), once per client object; most: none. */
export function groupIndexedAttributes(client: ScimClient): readonly IndexedAttribute[] {
  if (client.extensions.length === 0) return NONE;
  let found = indexedOf.get(client);
  if (found === undefined) {
    found = indexedAttributesOf(client.extensions, "Group");
    indexedOf.set(client, found);
  }
  return found;
}

/** Whether two stored extension sets are the same (validation writes them in one key order). */
export const sameExtensions = (a: GroupExtensions | null, b: GroupExtensions | null): boolean =>
  a === b || JSON.stringify(a ?? {}) === JSON.stringify(b ?? {});

/**
 * Writes the group's rows of the extension index for the attributes the writing client indexes (`before`: the
 * group before this change; undefined for a new group). A value of a `uniqueness: "server"` attribute another group
 * of the organization holds refuses the change (GroupError extensionValueTaken, rolled back with it).
 */
export async function indexExtensions(
  trx: Transaction<Database>,
  client: ScimClient,
  group: Group,
  before: Group | undefined,
): Promise<void> {
  const indexed = groupIndexedAttributes(client);
  if (indexed.length === 0) return;
  const values = extensionValuesOf(group.extensions ?? {}, indexed);
  if (before !== undefined && sameExtensionValues(values, extensionValuesOf(before.extensions ?? {}, indexed))) return;
  const keys = before === undefined ? [] : indexed.map((a) => a.key);
  try {
    await replaceIndexedValues(trx, GROUP_EXTENSION_INDEX, group.organizationId, group.id, keys, values);
  } catch (e) {
    if (!isUniqueViolation(e, GROUP_EXTENSION_UNIQUE_KEY)) throw e;
    throw new GroupError(
      "extensionValueTaken",
      "another group of the organization holds this value of a unique extension attribute",
    );
  }
}
