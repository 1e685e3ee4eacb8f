/** A SCIM user document as stored in `identities.scim` (see IdentitiesTable): JSON, without id/meta/groups/password. */
export type UserDocument = Record<string, unknown>;

/** What a create or a replace writes: the validated document and, when the request carried one, the password. */
export interface UserWrite {
  readonly scim: UserDocument;
  readonly password?: string | undefined;
}

/** Turns the stored document into the one to write (PUT, PATCH); it may throw to refuse the request. */
export type Change = (current: UserDocument) => UserWrite;

/** A direct group membership of a user (its SCIM `groups` attribute). */
export interface GroupRef {
  readonly value: string;
  readonly display: string;
}

/** A user as read back: the document plus what the server computes. */
export interface StoredUser {
  readonly id: string;
  readonly organizationId: string;
  readonly scim: UserDocument;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /** Undefined when the caller did not ask for memberships (the projection excludes `groups`). */
  readonly groups: readonly GroupRef[] | undefined;
  /** The manager's display name, only for a manager of the same organization. */
  readonly managerDisplayName: string | null;
}

/**
 * A user as read: the stored document as JSON text (data to hand on, parsed only by who needs its values) and what
 * the server computes.
 */
export interface UserRecord {
  readonly id: string;
  /** The row version: every write of the row changes it. */
  readonly version: string;
  /** `identities.scim` as jsonb writes it (`{"key": value, ...}`): a UserDocument. */
  readonly document: string;
  /** Whether the document holds a key the server owns (id, meta, groups, password); written documents never do. */
  readonly ownedKeys: boolean;
  /** RFC 3339 UTC timestamps with milliseconds, as Date.toISOString writes them. */
  readonly createdAt: string;
  readonly updatedAt: string;
  /**
   * The direct memberships as JSON text: `[]`, or `[{"id":"<group id>","display":<displayName>}, ...]` ordered by
   * displayName — exactly these keys, in this order, without whitespace. Undefined when not read (see ReadView).
   */
  readonly groups: string | undefined;
  /** The manager's display name, only for a manager of the same organization. */
  readonly managerDisplayName: string | null;
}

/** What a read must load beyond the row itself. */
export interface ReadView {
  readonly groups: boolean;
}

/** The indexed filters of GET /Users. */
export type UserFilter =
  | {
      readonly attribute: "userName" | "externalId" | "employeeNumber" | "groups.value";
      readonly value: string;
    }
  | {
      /** An indexed extension attribute: `key` as the extension index stores it, `value` already case-folded. */
      readonly attribute: "extension";
      readonly key: string;
      readonly value: string;
    };

/** Offset page (count + OFFSET) or keyset page (`id > afterId`, or after (`afterValue`, `afterId`) in a sort). */
export type UserPage = OffsetPage | CursorPage;
export type OffsetPage = { readonly kind: "offset"; readonly offset: number; readonly limit: number };
export type CursorPage = {
  readonly kind: "cursor";
  readonly afterId: string | undefined;
  /** Sorted listings: the sort value of the row `afterId` names (null: it had none). */
  readonly afterValue?: string | null;
  readonly limit: number;
};

/** An identity as the admin API shows it: never the password hash. */
export interface Identity {
  readonly id: string;
  readonly organizationId: string;
  readonly active: boolean;
  readonly userName: string;
  readonly traits: Record<string, unknown>;
  readonly scim: UserDocument;
  readonly hasPassword: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}
