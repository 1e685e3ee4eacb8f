import type { StoredDocument } from "./stored-document.js";

/** A SCIM user document as stored in `identities.scim` (see IdentitiesTable): JSON, without id/meta/groups/password. */
export type UserDocument = Record<string, unknown>;

/** What a create or a replace writes: the validated document and, when the request carried one, the password. */
export interface UserWrite {
  readonly scim: UserDocument;
  readonly password?: string | undefined;
}

/** Turns the stored document into the one to write (PUT, PATCH); it may throw to refuse the request. */
export type Change = (current: UserDocument) => UserWrite;

/** A direct group membership of a user: the group's id and displayName. */
export interface Membership {
  readonly groupId: string;
  readonly displayName: string;
}

/**
 * A user as the directory stores it: the document plus what the server computes. The one shape every reader gets —
 * SCIM renders its resource from it, the admin API its summary.
 */
export interface StoredUser {
  readonly id: string;
  /** The row version: every write of the row changes it. */
  readonly version: string;
  readonly document: StoredDocument;
  /**
   * RFC 3339 UTC instants with milliseconds, exactly as Date#toISOString writes them: decoded straight from
   * PostgreSQL's text, since a Date costs a parse here and a toISOString in every rendering.
   */
  readonly createdAt: string;
  readonly updatedAt: string;
  /** The direct memberships ordered by displayName; undefined when not read (see ReadView). */
  readonly groups: readonly Membership[] | undefined;
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
