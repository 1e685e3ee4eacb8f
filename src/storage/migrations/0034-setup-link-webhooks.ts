import { type Kysely, sql } from "kysely";

/**
 * A setup link hands its connections the application's webhook (docs/setup-links.md, "Your webhook"): the URL, the
 * secret sealed with ROSTER_SECRETS as a connection's is (re-sealed by the same rotation), the retry setting, and the
 * `tenant` and `product` copied into every webhook body ("" = not given). A connection created through the link gets
 * them in the transaction that creates it; a link without a URL leaves the webhook to the organization's connections.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table setup_links
      add column webhook_url text,
      add column webhook_secret_sealed text,
      add column webhook_retry text not null default 'none',
      add column tenant text not null default '',
      add column product text not null default '';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table setup_links
      drop column webhook_url,
      drop column webhook_secret_sealed,
      drop column webhook_retry,
      drop column tenant,
      drop column product;
  `.execute(db);
}
