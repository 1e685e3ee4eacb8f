import type { CursorPage, OffsetPage } from "../identities/types.js";

/** A directory group; its members are read separately, as rows (in chunks for a large group). */
export interface Group {
  readonly id: string;
  readonly organizationId: string;
  readonly displayName: string;
  readonly externalId: string | null;
  /** Custom schema extension objects keyed by URN, as validated (docs/scim-extensions.md); null when none. */
  readonly extensions: GroupExtensions | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /** The row version: every write of the group or of its members changes it (meta.version, ETag). */
  readonly version: string;
}

/** A group's extension objects, each keyed by its schema URN; the clients that did not declare one do not see it. */
export type GroupExtensions = Readonly<Record<string, unknown>>;

export type MemberKind = "User" | "Group";

/** A member named by a client: the id of an identity or a group; the kind is inferred when absent (IdPs omit it). */
export interface MemberRef {
  /** Lower-case UUID. */
  readonly value: string;
  readonly type?: MemberKind;
}

/**
 * One membership change, applied with set-based SQL in request order. The SCIM PATCH engine emits these as its
 * MemberOp, so the protocol adapter hands its output over unchanged and the domain never imports the protocol.
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
  /** Every extension object the group is to hold (the writer's and other clients'); null for none. */
  readonly extensions?: GroupExtensions | null;
}

/** What a PATCH asks for, computed from the locked current group inside the transaction. */
export interface GroupPatch {
  readonly displayName: string;
  readonly externalId: string | null;
  readonly membership: readonly MembershipChange[];
  /** Every extension object the group is to hold; undefined leaves them as they are. */
  readonly extensions?: GroupExtensions | null;
}

export type GroupFilter =
  | { readonly attribute: "displayName"; readonly value: string }
  | { readonly attribute: "externalId"; readonly value: string }
  /** An indexed extension attribute: `key` as the extension index stores it, `value` already case-folded. */
  | { readonly attribute: "extension"; readonly key: string; readonly value: string };

/** One list page: offset pages count the matches; sorted cursor pages give each row's sort value (next cursor). */
export interface GroupList {
  readonly rows: Group[];
  readonly total?: number;
  readonly sortValues?: (string | null)[];
}

/** Offset page, or keyset page: after `afterId` in id order, or after (`afterValue`, `afterId`) in a sort. */
export type GroupPage = OffsetPage | CursorPage;

/**
 * A direct member of a group as read: its id, what it is, and its display name resolved at read time (the user's
 * userName, or the sub-group's displayName). The protocols render it (SCIM adds `$ref`).
 */
export interface Member {
  readonly value: string;
  readonly type: MemberKind;
  readonly display: string;
}
