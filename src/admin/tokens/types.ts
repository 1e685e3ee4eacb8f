export type AdminRole = "admin" | "viewer";
export const ADMIN_ROLES: readonly AdminRole[] = ["admin", "viewer"];

export interface AdminToken {
  readonly id: string;
  readonly name: string;
  readonly role: AdminRole;
  readonly expireTime: Date | null;
  readonly revokeTime: Date | null;
  readonly lastUsedTime: Date | null;
  readonly createTime: Date;
}

export type AdminTokenState = "ACTIVE" | "EXPIRED" | "REVOKED";

export const tokenStateOf = (token: AdminToken, now: Date): AdminTokenState => {
  if (token.revokeTime !== null) return "REVOKED";
  if (token.expireTime !== null && token.expireTime.getTime() <= now.getTime()) return "EXPIRED";
  return "ACTIVE";
};

/** Who called the admin API: the bootstrap token (ROSTER_ADMIN_TOKEN or the generated one) or a named token. */
export type AdminPrincipal =
  | { readonly kind: "bootstrap"; readonly role: "admin" }
  | { readonly kind: "token"; readonly role: AdminRole; readonly tokenId: string; readonly name: string }
  | SetupPrincipal;

/** A customer's IT admin, through a setup link's session: only its organization's connections (docs/setup-links.md). */
export interface SetupPrincipal {
  readonly kind: "setup";
  readonly role: "setup";
  readonly linkId: string;
  readonly organizationId: string;
  /** The session cookie, which its CSRF token is derived from. */
  readonly cookie: string;
}
