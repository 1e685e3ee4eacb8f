/** A directory group (DESIGN.md "Domain"); members are read separately, page by page or as JSON built by SQL. */
export interface Group {
  readonly id: string;
  readonly organizationId: string;
  readonly displayName: string;
  readonly externalId: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export type MemberKind = "User" | "Group";

/** A member named by a client: the id of an identity or a group; the kind is inferred when absent (DESIGN R1). */
export interface MemberRef {
  /** Lower-case UUID. */
  readonly value: string;
  readonly type?: MemberKind;
}

/**
 * One membership change, applied with set-based SQL in request order. Structurally the SCIM PATCH engine's MemberOp,
 * so the protocol adapter hands its output over unchanged without the domain importing the protocol.
 */
export type MembershipChange =
  | { readonly kind: "add"; readonly members: readonly MemberRef[] }
  | { readonly kind: "remove"; readonly values: readonly string[] }
  | { readonly kind: "removeAll" }
  | { readonly kind: "replace"; readonly members: readonly MemberRef[] };

/** The attributes a create or a full replace (PUT) sets. */
export interface GroupInput {
  readonly displayName: string;
  readonly externalId: string | null;
  readonly members: readonly MemberRef[];
}

/** What a PATCH asks for, computed from the locked current group inside the transaction. */
export interface GroupPatch {
  readonly displayName: string;
  readonly externalId: string | null;
  readonly membership: readonly MembershipChange[];
}

export type GroupFilter =
  | { readonly attribute: "displayName"; readonly value: string }
  | { readonly attribute: "externalId"; readonly value: string };

export type GroupPage =
  | { readonly kind: "offset"; readonly offset: number; readonly limit: number }
  | { readonly kind: "cursor"; readonly afterId: string | undefined; readonly limit: number };

/** Which member sub-attributes a response carries (projection pushed down into SQL). */
export interface MemberFields {
  readonly value: boolean;
  readonly display: boolean;
  readonly type: boolean;
  readonly ref: boolean;
}
