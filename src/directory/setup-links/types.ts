import type { WebhookRetry } from "../scim-clients/types.js";

/** A link that lets a customer's IT admin set up one organization's SCIM connections (docs/setup-links.md). */
export interface SetupLink {
  readonly id: string;
  readonly organizationId: string;
  readonly intent: SetupIntent;
  readonly returnUrl: string | null;
  readonly createTime: Date;
  readonly expireTime: Date;
  readonly revokeTime: Date | null;
  readonly firstOpenTime: Date | null;
  /** The webhook its connections get (its secret stays sealed in storage, read by nothing but their creation). */
  readonly webhook: { readonly url: string; readonly retry: WebhookRetry } | null;
  /** Copied into every webhook body of its connections; "" when not given. */
  readonly tenant: string;
  readonly product: string;
}

export const SETUP_INTENTS = ["directory_sync"] as const;
export type SetupIntent = (typeof SETUP_INTENTS)[number];

export type SetupLinkState = "ACTIVE" | "EXPIRED" | "REVOKED";

export const setupLinkStateOf = (link: SetupLink, now: Date): SetupLinkState => {
  if (link.revokeTime !== null) return "REVOKED";
  return link.expireTime.getTime() <= now.getTime() ? "EXPIRED" : "ACTIVE";
};

/** A new link as stored: the token only as its digest, the webhook secret sealed. */
export type NewSetupLinkRow = Omit<SetupLink, "revokeTime" | "firstOpenTime" | "webhook"> & {
  readonly tokenDigest: string;
  readonly webhook: { readonly url: string; readonly secretSealed: string; readonly retry: WebhookRetry } | null;
};
