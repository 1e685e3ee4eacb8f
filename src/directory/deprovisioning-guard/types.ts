/** A connection's deprovisioning guard (docs/deprovisioning.md). */
export interface GuardSettings {
  readonly enabled: boolean;
  /** Trips only when the window's deprovisionings exceed this share (percent) of the organization's active users… */
  readonly sharePercent: number;
  /** …and this absolute count. */
  readonly minCount: number;
  readonly windowSeconds: number;
}

export const DEFAULT_GUARD: GuardSettings = { enabled: true, sharePercent: 20, minCount: 50, windowSeconds: 3600 };

export interface HeldUser {
  readonly id: string;
  readonly email: string;
  readonly event: string;
}

export interface GuardState extends GuardSettings {
  /** When the guard tripped; null while effects flow. */
  readonly trippedTime: Date | null;
  /** Deprovisioning changes counted in the current window. */
  readonly windowCount: number;
  readonly heldEvents: number;
  readonly heldUsers: number;
  /** Held users that are still inactive or deleted in the directory: what a discard leaves in place. */
  readonly heldUsersStillInactive: number;
  /** Up to 10 held users, oldest first. */
  readonly sample: readonly HeldUser[];
}

export interface ReleaseResult {
  readonly released: number;
}

export interface DiscardResult {
  readonly discarded: number;
  readonly heldUsersStillInactive: number;
}
