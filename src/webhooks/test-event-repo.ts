import { sql } from "kysely";
import { uuidv7 } from "../platform/ids.js";
import type { Db } from "../storage/database.js";
import { webhookBodyText } from "../storage/event-port.js";

/** The event type of a test delivery: a webhook event, never a directory event (not in the events feed). */
export const TEST_EVENT = "webhook.test";

/**
 * Queues one `webhook.test` event in the client's outbox: the dispatcher signs, sends, retries (per the client's
 * `webhook.retry`) and logs it like any event. The body is the usual envelope; `data` says it is a test and names
 * the connection. Its ordering key is its own id, so it neither waits behind a resource's pending events nor holds
 * one back. Returns the event's id (the `webhook-id` it is sent with).
 */
export interface TestEventTarget {
  readonly clientId: string;
  readonly organizationId: string;
  readonly tenant: string;
  readonly product: string;
}

export async function queueTestEvent(db: Db, client: TestEventTarget, now: Date): Promise<string> {
  const id = uuidv7(now.getTime());
  const data = JSON.stringify({
    test: true,
    message: "A test event sent from the admin API; it changes nothing in the directory.",
    directory_id: client.clientId,
    organization_id: client.organizationId,
  });
  const body = webhookBodyText(client, TEST_EVENT, data, id, now.toISOString());
  await sql`
    insert into webhook_outbox (id, client_id, organization_id, event, ordering_key, body, created_at)
    values (${id}::uuid, ${client.clientId}, ${client.organizationId}::uuid, ${TEST_EVENT}, ${`${TEST_EVENT}/${id}`},
      ${body}, ${now}::timestamptz)
  `.execute(db);
  return id;
}
