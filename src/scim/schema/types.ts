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
}

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
