import { type DirectoryEvent, userEventData } from "../../src/directory/events.js";
import type { ScimClient } from "../../src/directory/scim-clients/types.js";
import { toScimClient } from "../../src/directory/scim-clients/repo.js";
import type { ManualClock } from "../../src/platform/clock.js";
import { SecretBox } from "../../src/platform/crypto.js";
import { createLogger } from "../../src/platform/logger.js";
import type { Db } from "../../src/storage/database.js";
import { createWebhooks, type Webhooks, type WebhooksOptions } from "../../src/webhooks/index.js";
import { LOOPBACK_WEBHOOK_ALLOW, TEST_SECRETS } from "./constants.js";

/** The key ring of the test apps (some tests still import it from here). */
export { TEST_SECRETS };

/** The webhooks module on a test database, with the test clock; no polling loop (use runOnce/drain). */
export function testWebhooks(
  db: Db,
  clock: ManualClock,
  options: Partial<Omit<WebhooksOptions, "db" | "clock">> = {},
): Webhooks {
  return createWebhooks({
    db,
    clock,
    logger: createLogger("silent"),
    box: new SecretBox(TEST_SECRETS),
    timeoutMs: 2000,
    urlAllow: LOOPBACK_WEBHOOK_ALLOW,
    ...options,
  });
}

export async function loadClient(db: Db, clientId: string): Promise<ScimClient> {
  const row = await db
    .selectFrom("scim_clients")
    .selectAll()
    .where("client_id", "=", clientId)
    .executeTakeFirstOrThrow();
  return toScimClient(row);
}

/** What a directory service does: record events inside the transaction of its change. */
export async function recordEvents(
  db: Db,
  webhooks: Webhooks,
  clientId: string,
  events: readonly DirectoryEvent[],
): Promise<void> {
  const client = await loadClient(db, clientId);
  await db.transaction().execute((trx) => webhooks.sink.record(trx, client, events));
}

export async function outboxCount(db: Db): Promise<number> {
  const r = await db
    .selectFrom("webhook_outbox")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/**
 * One user.updated event of `userId`; `n` travels in the user's displayName, so what a receiver got can be put in
 * order (see `numberOf`).
 */
export const userUpdate = (userId: string, n: number): DirectoryEvent => ({
  kind: "user.updated",
  resourceId: userId,
  data: userEventData({ id: userId, userName: `u-${userId}@example.com`, displayName: String(n) }),
});

/** The `n` of a delivered `userUpdate` body. */
export const numberOf = (json: Record<string, unknown>): number =>
  Number((json.data as { raw: { displayName: string } }).raw.displayName);

/**
 * `rounds` transactions in turn, the n-th recording `userUpdate(user, n)` of every one of `users`: many resources'
 * changes interleaved, each resource's in order.
 */
export async function recordRounds(
  db: Db,
  webhooks: Webhooks,
  clientId: string,
  users: readonly string[],
  rounds: number,
): Promise<void> {
  for (let n = 0; n < rounds; n++) {
    await recordEvents(
      db,
      webhooks,
      clientId,
      users.map((u) => userUpdate(u, n)),
    );
  }
}
