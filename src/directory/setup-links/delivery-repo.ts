import type { Transaction } from "kysely";
import type { Database } from "../../storage/schema.js";

/** The webhook columns a connection created through a setup link starts with. */
export interface LinkDelivery {
  readonly webhook_url: string;
  readonly webhook_secret_sealed: string | null;
  readonly webhook_retry: string;
  readonly tenant: string;
  readonly product: string;
}

/**
 * What a connection created through the link `linkId` starts with, read in the transaction that creates it
 * (docs/setup-links.md, "Your webhook"; docs/decisions.md, "A setup link's webhook"):
 * 1. the link's webhook (URL, sealed secret, retry), tenant and product, when the link has a webhook;
 * 2. else the organization's webhook: that of its most recently created connection with a webhook URL, when all of
 *    its connections with one agree on URL, tenant and product (one endpoint of one application); the link's tenant
 *    and product, when given, still apply;
 * 3. else none: the connection's events are in the feed only.
 * The secret is copied as sealed: it is never opened here, and the ROSTER_SECRETS rotation re-seals the copy too.
 */
export async function linkDelivery(
  trx: Transaction<Database>,
  organizationId: string,
  linkId: string,
): Promise<Partial<LinkDelivery>> {
  const link = await trx
    .selectFrom("setup_links")
    .select(["webhook_url", "webhook_secret_sealed", "webhook_retry", "tenant", "product"])
    .where("id", "=", linkId)
    .where("organization_id", "=", organizationId)
    .executeTakeFirst();
  if (link === undefined) return {};
  const { webhook_url: url, tenant, product } = link;
  if (url !== null) return { ...link, webhook_url: url };
  const given = { ...(tenant === "" ? {} : { tenant }), ...(product === "" ? {} : { product }) };
  const withWebhook = trx
    .selectFrom("scim_clients")
    .where("organization_id", "=", organizationId)
    .where("webhook_url", "is not", null);
  const endpoints = await withWebhook.select(["webhook_url", "tenant", "product"]).distinct().limit(2).execute();
  if (endpoints.length !== 1) return given;
  const latest = await withWebhook
    .select(["webhook_url", "webhook_secret_sealed", "webhook_retry", "tenant", "product"])
    .orderBy("create_time", "desc")
    .orderBy("client_id", "desc")
    .limit(1)
    .executeTakeFirst();
  if (latest === undefined || latest.webhook_url === null) return given;
  return { ...latest, webhook_url: latest.webhook_url, ...given };
}
