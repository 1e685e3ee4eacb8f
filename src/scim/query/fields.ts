import type { FieldRef, ValueType } from "../../directory/search/types.js";
import {
  COMMON_ATTRIBUTES,
  coreSchemaOf,
  ENTERPRISE_USER_SCHEMA,
  type ResourceName,
  resolveAttribute,
  type SchemaRegistry,
} from "../schema/registry.js";
import { type AttributeDefinition, isFilterable } from "../schema/types.js";

/** An attribute a filter or sortBy names, resolved through the schema registry. */
export interface ResolvedField {
  readonly schema: string;
  readonly core: boolean;
  readonly attribute: AttributeDefinition;
  readonly sub?: AttributeDefinition | undefined;
  readonly filterable: boolean;
  readonly indexKey?: string | undefined;
}

/** A client's indexed extension attribute by schema URN and name (see client-registry's extensionLookup). */
type IndexLookup = (urn: string | undefined, name: string) => { readonly key: string } | undefined;

/** `userName`, `name.familyName`, `urn:…:User:employeeNumber`, `meta.lastModified`, case-insensitively. */
export function resolveField(
  kind: ResourceName,
  path: string,
  registry: SchemaRegistry,
  indexed?: IndexLookup,
): ResolvedField | undefined {
  const found = resolveAttribute(kind, path, registry);
  if (found === undefined) return undefined;
  const core = found.schema === coreSchemaOf(kind);
  const filterable = isFilterable(found.attribute) && (found.sub === undefined || isFilterable(found.sub));
  const indexKey =
    core || found.sub !== undefined || indexed === undefined
      ? undefined
      : indexed(found.schema, found.attribute.name)?.key;
  return { schema: found.schema, core, attribute: found.attribute, sub: found.sub, filterable, indexKey };
}

const TYPES: Record<AttributeDefinition["type"], ValueType> = {
  string: "string",
  reference: "reference",
  boolean: "boolean",
  integer: "number",
  decimal: "number",
  dateTime: "dateTime",
  complex: "complex",
  binary: "string",
};

/** The directory's view of a resolved attribute: its schema, path, type and case rule. */
export function fieldOf(r: ResolvedField): FieldRef {
  const leaf = r.sub ?? r.attribute;
  return {
    schema: r.schema,
    core: r.core,
    name: r.attribute.name,
    ...(r.sub === undefined ? {} : { sub: r.sub.name }),
    type: TYPES[leaf.type],
    caseExact: leaf.caseExact,
    multiValued: r.attribute.multiValued,
    ...(r.indexKey === undefined || r.sub !== undefined ? {} : { indexKey: r.indexKey }),
  };
}

/** Every attribute path a filter may name for this resource type, for error messages. */
export const filterableNames = (kind: ResourceName, registry: SchemaRegistry): readonly string[] =>
  registry.memo(`filterable:${kind}`, () =>
    registry.schemasFor(kind).flatMap((schema) => {
      const core = schema.id === coreSchemaOf(kind);
      const attributes = core ? [...schema.attributes, ...COMMON_ATTRIBUTES] : schema.attributes;
      const prefix = core || schema.id === ENTERPRISE_USER_SCHEMA ? "" : `${schema.id}:`;
      return attributes
        .filter(isFilterable)
        .flatMap((a) =>
          a.type === "complex"
            ? (a.subAttributes ?? []).filter(isFilterable).map((s) => `${prefix}${a.name}.${s.name}`)
            : [`${prefix}${a.name}`],
        );
    }),
  );
