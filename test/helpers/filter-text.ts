import type { FieldRef, FilterNode } from "../../src/directory/search/types.js";

const field = (f: FieldRef): string =>
  `${f.core ? "" : `${f.schema}:`}${f.name}${f.sub === undefined ? "" : `.${f.sub}`}`;

/** A filter tree as compact text, for tables of expected parses: `and(eq(userName,"a"),pr(title))`. */
export function showFilter(node: FilterNode): string {
  switch (node.op) {
    case "and":
    case "or":
      return `${node.op}(${node.args.map(showFilter).join(",")})`;
    case "not":
      return `not(${showFilter(node.arg)})`;
    case "any":
      return `any(${field(node.field)},${showFilter(node.where)})`;
    case "pr":
      return `pr(${field(node.field)})`;
    default:
      return `${node.op}(${field(node.field)},${JSON.stringify(node.value)})`;
  }
}
