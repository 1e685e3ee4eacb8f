import { type Kysely, sql } from "kysely";

/**
 * The W3C `traceparent` of the request that wrote an outbox row (null when tracing is off): the span of each
 * delivery attempt links to it, so a webhook's delivery is found from the SCIM request that caused it and back.
 * Nullable without a default: adding it rewrites nothing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhook_outbox add column traceparent text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhook_outbox drop column traceparent`.execute(db);
}
