import type { ExtensionAttribute, IndexedAttribute } from "../../directory/scim-clients/extensions.js";
import type { ScimClient } from "../../directory/scim-clients/types.js";
import type { ExtensionFilterLookup } from "../query/filter.js";
import { CORE_REGISTRY, SchemaRegistry } from "./registry.js";
import type { AttributeDefinition } from "./types.js";

/**
 * The compiled registry of each client object. A client object lives as long as its cache entry (a few seconds,
 * see ScimClientCache), so the compiled registry goes with it and a changed declaration is compiled afresh.
 */
const compiled = new WeakMap<ScimClient, SchemaRegistry>();

/**
 * RFC 7643 §7 characteristics of a declared attribute. Filters and sortBy may name the attributes the declaration
 * indexes (filterable, or unique), and no other: an index answers their `eq`.
 */
const definitionOf = (a: ExtensionAttribute): AttributeDefinition => ({
  name: a.name,
  type: a.type,
  multiValued: a.multiValued,
  description: a.description,
  required: a.required,
  caseExact: a.caseExact,
  mutability: a.mutability,
  returned: a.returned,
  uniqueness: a.uniqueness,
  filterable: a.filterable || a.uniqueness === "server",
  ...(a.canonicalValues === undefined ? {} : { canonicalValues: a.canonicalValues }),
  ...(a.referenceTypes === undefined ? {} : { referenceTypes: a.referenceTypes }),
  ...(a.subAttributes === undefined ? {} : { subAttributes: a.subAttributes.map(definitionOf) }),
});

/** The schema registry a SCIM client sees: the standard one unless it declared extensions or stores unknown ones. */
export function registryOf(client: ScimClient): SchemaRegistry {
  if (client.extensions.length === 0 && client.unknownExtensions === "reject") return CORE_REGISTRY;
  let registry = compiled.get(client);
  if (registry === undefined) {
    registry = new SchemaRegistry(
      client.extensions.map((e) => ({
        resource: e.resource,
        required: e.required,
        schema: { id: e.schema, name: e.name, description: e.description, attributes: e.attributes.map(definitionOf) },
      })),
      client.unknownExtensions === "store",
    );
    compiled.set(client, registry);
  }
  return registry;
}

/**
 * The filter parser's view of a resource type's indexed extension attributes (a schema URN, or none, and a name,
 * case-insensitively); undefined when there are none, as for most clients.
 */
export const extensionLookup = (indexed: readonly IndexedAttribute[]): ExtensionFilterLookup | undefined =>
  indexed.length === 0
    ? undefined
    : (urn, name) => {
        if (urn !== undefined) {
          const key = `${urn}:${name}`.toLowerCase();
          return indexed.find((a) => a.key === key);
        }
        return indexed.find((a) => a.name.toLowerCase() === name.toLowerCase());
      };

/** An extension filter's value as the index holds it: lower-cased unless the attribute is caseExact (RFC 7643 §2.2). */
export const indexedValue = (filter: { readonly caseExact: boolean; readonly value: string }): string =>
  filter.caseExact ? filter.value : filter.value.toLowerCase();
