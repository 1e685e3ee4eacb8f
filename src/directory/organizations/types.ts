export interface Organization {
  readonly id: string;
  readonly name: string;
  /** API keys acting for an identity of this organization are suspended/revoked with it (docs/security.md). */
  readonly keysFollowIdentity: boolean;
  readonly createTime: Date;
}

/** Changes to an organization; `undefined` leaves a field as it is. */
export interface OrganizationChanges {
  readonly name?: string;
  readonly keysFollowIdentity?: boolean;
}
