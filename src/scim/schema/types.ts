/** RFC 7643 §7: the attribute characteristics every schema definition carries. */
export type AttributeType =
  | "string"
  | "boolean"
  | "decimal"
  | "integer"
  | "dateTime"
  | "reference"
  | "complex"
  | "binary";
export type Mutability = "readOnly" | "readWrite" | "immutable" | "writeOnly";
export type Returned = "always" | "never" | "default" | "request";
export type Uniqueness = "none" | "server" | "global";

export interface AttributeDefinition {
  readonly name: string;
  readonly type: AttributeType;
  readonly multiValued: boolean;
  readonly description: string;
  readonly required: boolean;
  readonly caseExact: boolean;
  readonly mutability: Mutability;
  readonly returned: Returned;
  readonly uniqueness: Uniqueness;
  readonly canonicalValues?: readonly string[];
  readonly referenceTypes?: readonly string[];
  readonly subAttributes?: readonly AttributeDefinition[];
  /**
   * Roster's own limit on a string's length in characters (code points): RFC 7643 §7 has no characteristic for it,
   * so /Schemas states it in the description and leaves this key out.
   */
  readonly maxLength?: number;
  /**
   * Roster's own characteristic (left out of /Schemas like maxLength): false for what the server computes on the way
   * out (a member's display, a $ref, meta.location) and so cannot filter or sort on. See isFilterable.
   */
  readonly filterable?: boolean;
  /**
   * Roster's own characteristic (left out of /Schemas like maxLength): the value is the id of a resource of this
   * service (a UUID), so a filter's `eq` on it must name one (a group's `members.value`, a user's `groups.value`).
   */
  readonly resourceId?: boolean;
}

/** Whether filters and sortBy may name the attribute: never a write-only secret or binary data (RFC 7644 §3.4.2.2). */
export const isFilterable = (a: AttributeDefinition): boolean =>
  a.filterable !== false && a.returned !== "never" && a.type !== "binary";

export interface SchemaDefinition {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly attributes: readonly AttributeDefinition[];
}

export interface ResourceTypeDefinition {
  readonly id: "User" | "Group";
  readonly name: string;
  readonly endpoint: string;
  readonly description: string;
  /** URN of the core schema. */
  readonly schema: string;
  readonly schemaExtensions: readonly { readonly schema: string; readonly required: boolean }[];
}
