import type { Clock } from "../../platform/clock.js";
import { type SecretBox, sha256Hex } from "../../platform/crypto.js";
import { randomToken, uuidv7 } from "../../platform/ids.js";
import type { WebhookRetry } from "../scim-clients/types.js";
import type { SetupLinkRepo } from "./repo.js";
import { type SetupIntent, type SetupLink, setupLinkStateOf } from "./types.js";

/** Visible start of every setup link token (secret scanners recognise it). */
export const SETUP_TOKEN_PREFIX = "rsl_";
export const DEFAULT_SETUP_LINK_SECONDS = 7 * 86_400;
export const MAX_SETUP_LINK_SECONDS = 30 * 86_400;

export type OpenResult =
  | { readonly ok: true; readonly link: SetupLink }
  | { readonly ok: false; readonly reason: "unknown" | "expired" | "revoked" };

/** A new link; `webhook`, `tenant` and `product` are what its connections get (docs/setup-links.md). */
export interface SetupLinkInput {
  readonly organizationId: string;
  readonly intent: SetupIntent;
  readonly expireTime: Date;
  readonly returnUrl: string | null;
  readonly webhook?: { readonly url: string; readonly secret: string; readonly retry: WebhookRetry } | null;
  readonly tenant?: string;
  readonly product?: string;
}

/**
 * Setup links: 256 random bits each, shown once in the link's URL, kept as a SHA-256 digest. Nothing is cached, so a
 * revocation holds on every instance from the next request on. A link's webhook secret is sealed as a connection's
 * is, and only ever copied, sealed, to the connections the link creates.
 */
export class SetupLinkService {
  constructor(
    private readonly repo: SetupLinkRepo,
    private readonly clock: Clock,
    private readonly box: SecretBox,
  ) {}

  async create(input: SetupLinkInput): Promise<{ link: SetupLink; token: string }> {
    const now = this.clock.now();
    const token = randomToken(32, SETUP_TOKEN_PREFIX);
    const webhook = input.webhook ?? null;
    const link = await this.repo.insert({
      id: uuidv7(now.getTime()),
      organizationId: input.organizationId,
      intent: input.intent,
      returnUrl: input.returnUrl,
      createTime: now,
      expireTime: input.expireTime,
      tokenDigest: sha256Hex(token),
      webhook:
        webhook === null
          ? null
          : { url: webhook.url, secretSealed: this.box.seal(webhook.secret), retry: webhook.retry },
      tenant: input.tenant ?? "",
      product: input.product ?? "",
    });
    return { link, token };
  }

  get(id: string): Promise<SetupLink | undefined> {
    return this.repo.get(id);
  }

  list(organizationId: string | undefined, after: string | undefined, limit: number): Promise<SetupLink[]> {
    return this.repo.list(organizationId, after, limit);
  }

  revoke(id: string): Promise<SetupLink | undefined> {
    return this.repo.revoke(id, this.clock.now());
  }

  /** The live link a presented token names (its first opening recorded), or why there is none. */
  async open(token: string): Promise<OpenResult> {
    if (!token.startsWith(SETUP_TOKEN_PREFIX) || token.length > 128) return { ok: false, reason: "unknown" };
    const link = await this.repo.open(sha256Hex(token), this.clock.now());
    return link === undefined ? { ok: false, reason: "unknown" } : this.#live(link);
  }

  /** The link of a session, if it is still live (revoked or expired links end their sessions too). */
  async live(id: string): Promise<SetupLink | undefined> {
    const link = await this.repo.get(id);
    if (link === undefined) return undefined;
    const result = this.#live(link);
    return result.ok ? result.link : undefined;
  }

  #live(link: SetupLink): OpenResult {
    const state = setupLinkStateOf(link, this.clock.now());
    if (state === "REVOKED") return { ok: false, reason: "revoked" };
    if (state === "EXPIRED") return { ok: false, reason: "expired" };
    return { ok: true, link };
  }
}
