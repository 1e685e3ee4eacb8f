import type { SortSpec } from "../../directory/search/types.js";
import { ScimError } from "../errors.js";
import { findAttribute, type SchemaRegistry } from "../schema/registry.js";
import { fieldOf, filterableNames, resolveField } from "./fields.js";
import type { ResourceKind } from "./filter.js";

/**
 * RFC 7644 §3.4.2.3: `sortBy` names a filterable attribute (a multi-valued one sorts by its `value`), `sortOrder` is
 * ascending (the default) or descending, case-insensitively.
 */
export function parseSort(
  kind: ResourceKind,
  sortBy: string,
  sortOrder: string | undefined,
  registry: SchemaRegistry,
): SortSpec {
  const order = (sortOrder ?? "ascending").trim().toLowerCase();
  if (order !== "ascending" && order !== "descending") {
    throw new ScimError(400, "invalidValue", 'sortOrder must be "ascending" or "descending"');
  }
  let resolved = resolveField(kind, sortBy, registry);
  if (resolved?.sub === undefined && resolved?.attribute.type === "complex" && resolved.attribute.multiValued) {
    const value = findAttribute(resolved.attribute.subAttributes ?? [], "value");
    resolved = value === undefined ? resolved : { ...resolved, sub: value };
  }
  const leaf = resolved?.sub ?? resolved?.attribute;
  if (resolved === undefined || !resolved.filterable || leaf === undefined || leaf.type === "complex") {
    throw new ScimError(
      400,
      "invalidValue",
      `sortBy "${sortBy}" is not a sortable attribute: sortable attributes of ${kind}: ${filterableNames(kind, registry).join(", ")}`,
    );
  }
  return { field: fieldOf(resolved), descending: order === "descending" };
}
