import type { SecretBox } from "../../platform/crypto.js";
import type { Logger } from "../../platform/logger.js";
import type { SetupLinkRepo } from "../setup-links/repo.js";
import type { ScimClientRepo } from "./repo.js";
import type { RetiredWebhookRepo } from "./retired-repo.js";

export interface ResealOutcome {
  /** Webhook secrets now sealed with the first key of ROSTER_SECRETS. */
  readonly resealed: number;
  /** Webhook secrets no key of ROSTER_SECRETS opens (the key that sealed them was removed too early). */
  readonly unreadable: number;
}

const BATCH = 100;

/**
 * ROSTER_SECRETS rotation (docs/security.md): re-encrypts every stored webhook secret that is not sealed with the
 * first key, in batches in client_id order. Each row is written only if it still holds the value read, so a
 * concurrent change (or another instance doing the same at start-up) is never overwritten. It walks the table once,
 * in the background after start-up: the rows are few (one per SCIM client) and no request waits for it. The
 * endpoints deleted connections keep until their last deliveries (`retired`) and the webhooks setup links hand their
 * connections (`links`) are re-encrypted too.
 */
export async function resealWebhookSecrets(
  repo: ScimClientRepo,
  box: SecretBox,
  logger: Logger,
  retired?: RetiredWebhookRepo,
  links?: SetupLinkRepo,
): Promise<ResealOutcome> {
  let resealed = 0;
  let unreadable = 0;
  const open = (sealed: string, owner: { clientId: string } | { setupLinkId: string }): string | undefined => {
    try {
      return box.open(sealed);
    } catch {
      unreadable += 1;
      logger.warn(owner, "webhook secret sealed with a key no longer in ROSTER_SECRETS");
      return undefined;
    }
  };
  let after = "";
  for (;;) {
    const rows = await repo.sealedOtherwise(box.primaryPrefix, after, BATCH);
    for (const { clientId, sealed } of rows) {
      const plaintext = open(sealed, { clientId });
      if (plaintext !== undefined && (await repo.reseal(clientId, sealed, box.seal(plaintext)))) resealed += 1;
    }
    const last = rows[rows.length - 1];
    if (last === undefined || rows.length < BATCH) break;
    after = last.clientId;
  }
  for (const s of (await retired?.sealedOtherwise(box.primaryPrefix)) ?? []) {
    const plaintext = open(s.sealed, { clientId: s.clientId });
    if (plaintext !== undefined && (await retired?.reseal(s, box.seal(plaintext)))) resealed += 1;
  }
  let afterLink: string | undefined;
  while (links !== undefined) {
    const rows = await links.sealedOtherwise(box.primaryPrefix, afterLink, BATCH);
    for (const { id, sealed } of rows) {
      const plaintext = open(sealed, { setupLinkId: id });
      if (plaintext !== undefined && (await links.reseal(id, sealed, box.seal(plaintext)))) resealed += 1;
    }
    afterLink = rows.at(-1)?.id;
    if (afterLink === undefined || rows.length < BATCH) break;
  }
  if (resealed > 0 || unreadable > 0) {
    logger.info({ resealed, unreadable }, "webhook secrets re-encrypted with the first key of ROSTER_SECRETS");
  }
  return { resealed, unreadable };
}
