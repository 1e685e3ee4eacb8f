/**
 * A filter and a sort over users or groups as plain data: the protocol parses its own syntax into these, and the
 * repositories compile them to SQL (search/repo-compile.ts). Attributes are named by schema and path, never by
 * column: where a value is stored is the repository's business.
 */

/** The type of an attribute's values, which decides how they compare. */
export type ValueType = "string" | "boolean" | "number" | "dateTime" | "reference" | "complex";

export type CompareOp = "eq" | "ne" | "co" | "sw" | "ew" | "gt" | "ge" | "lt" | "le";

export interface FieldRef {
  /** Schema URN of the attribute; the core schema of the resource for its own and the common attributes. */
  readonly schema: string;
  /** Whether `schema` is the resource type's core schema (its attributes sit at the top of the document). */
  readonly core: boolean;
  /** The attribute's name as the schema spells it. */
  readonly name: string;
  /** The sub-attribute's name, for `name.familyName`, `emails.value`, `meta.lastModified`. */
  readonly sub?: string;
  readonly type: ValueType;
  readonly caseExact: boolean;
  /** Whether the attribute named by `name` holds several values. */
  readonly multiValued: boolean;
  /**
   * For declared extension attributes whose values are indexed: the index's attribute key. `eq` then probes the
   * index instead of reading documents.
   */
  readonly indexKey?: string;
}

export type Literal = string | number | boolean;

export type FilterNode =
  | { readonly op: "and" | "or"; readonly args: readonly FilterNode[] }
  | { readonly op: "not"; readonly arg: FilterNode }
  | { readonly op: CompareOp; readonly field: FieldRef; readonly value: Literal }
  | { readonly op: "pr"; readonly field: FieldRef }
  /**
   * Some element of the multi-valued attribute `field` satisfies `where` (a value path such as
   * `emails[type eq "work"]`); the fields inside `where` are sub-attributes of `field`.
   */
  | { readonly op: "any"; readonly field: FieldRef; readonly where: FilterNode };

export interface SortSpec {
  readonly field: FieldRef;
  readonly descending: boolean;
}

/** What a list asks beyond its page: a filter, a sort, or neither. */
export interface SearchSpec {
  readonly filter?: FilterNode | undefined;
  readonly sort?: SortSpec | undefined;
}

/** A filter or sort that is well formed but that the store cannot answer (sorting by members, say). */
export class UnsupportedFilterError extends Error {
  readonly part: "filter" | "sort";
  constructor(message: string, part: "filter" | "sort" = "filter") {
    super(message);
    this.name = "UnsupportedFilterError";
    this.part = part;
  }
}
