import { DEFAULT_EVENT_RETENTION_DAYS, EventFeed } from "../events/feed.js";
import { eventStore } from "../events/repo.js";
import { FeedTokens } from "../events/token.js";
import type { Clock } from "../platform/clock.js";
import type { SecretBox } from "../platform/crypto.js";
import type { Logger } from "../platform/logger.js";
import type { Db } from "../storage/database.js";
import { EventBatcher } from "../storage/event-store.js";
import { WebhookDispatcher } from "./dispatcher.js";
import { EventLog } from "./event-log-repo.js";
import { WebhookResender } from "./resend.js";
import { HttpWebhookSender, type WebhookSender, webhookGuard } from "./sender.js";
import { type BulkResendRequest, requeueFailed } from "./bulk-resend-repo.js";

export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;
export const DEFAULT_LOG_RETENTION_DAYS = 30;

export interface WebhooksOptions {
  readonly db: Db;
  /**
   * Where the dispatcher claims events and records attempts; default `db`. The server passes a pool with
   * `synchronous_commit = off`: losing such a commit in a crash only means an at-least-once re-send (docs/webhooks.md).
   */
  readonly bookkeepingDb?: Db;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly box: SecretBox;
  /** Default: an undici sender with `timeoutMs`. */
  readonly sender?: WebhookSender;
  readonly timeoutMs?: number;
  readonly retentionDays?: number;
  readonly concurrency?: number;
  /** Events of one resource claimed together and sent back to back; default DEFAULT_CHAIN. */
  readonly chain?: number;
  readonly pollIntervalMs?: number;
  readonly claimIntervalMs?: number;
  /** Wraps the sender, e.g. to measure and trace each attempt (observability). */
  readonly wrapSender?: (sender: WebhookSender) => WebhookSender;
  /** ROSTER_EVENT_RETENTION_DAYS: how long the events feed keeps events; default 30. */
  readonly eventRetentionDays?: number;
  /** ROSTER_WEBHOOK_HEARTBEAT_MS; default DEFAULT_HEARTBEAT_MS. */
  readonly heartbeatMs?: number;
  /** ROSTER_WEBHOOK_URL_ALLOW: non-public addresses (and, if it names hosts, the only hosts) webhooks may reach. */
  readonly urlAllow?: readonly string[];
  /** Origins webhooks never reach whatever they resolve to (Roster's own public URL). */
  readonly refusedOrigins?: () => readonly string[];
  /** Deliveries of one organization in flight at once; default DEFAULT_CONCURRENCY_PER_ORGANIZATION. */
  readonly concurrencyPerOrganization?: number;
}

/**
 * The webhooks module, assembled: the sink (events and outbox rows), the dispatcher (not started), the event log,
 * resend, and the events feed over what the sink records.
 */
export interface Webhooks {
  readonly sink: EventBatcher;
  readonly feed: EventFeed;
  readonly dispatcher: WebhookDispatcher;
  readonly eventLog: EventLog;
  readonly resender: WebhookResender;
  /** Bulk resend: queues the failed events of a client again (bulk-resend-repo.ts); returns how many. */
  readonly requeueFailed: (request: BulkResendRequest) => Promise<number>;
  /** Why a webhook URL being configured is refused by the outbound guard (DNS included), or undefined. */
  readonly checkUrl: (url: string) => Promise<string | undefined>;
}

export function createWebhooks(o: WebhooksOptions): Webhooks {
  const timeoutMs = o.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
  const senderOptions = {
    timeoutMs,
    urlAllow: o.urlAllow ?? [],
    ...(o.refusedOrigins === undefined ? {} : { refusedOrigins: o.refusedOrigins }),
  };
  const guard = webhookGuard(senderOptions);
  const plainSender = o.sender ?? new HttpWebhookSender(senderOptions, guard);
  const sender = o.wrapSender === undefined ? plainSender : o.wrapSender(plainSender);
  const openSecret = (sealed: string) => o.box.open(sealed);
  const eventLog = new EventLog(o.db);
  const feed = new EventFeed(
    eventStore(o.db),
    o.clock,
    o.eventRetentionDays ?? DEFAULT_EVENT_RETENTION_DAYS,
    new FeedTokens(o.box.derivedKeys("roster-feed-token-v1")),
  );
  const dispatcher = new WebhookDispatcher({
    db: o.bookkeepingDb ?? o.db,
    clock: o.clock,
    logger: o.logger.child({ component: "webhooks" }),
    sender,
    eventLog,
    pruneEvents: () => feed.prune(),
    openSecret,
    timeoutMs,
    retentionDays: o.retentionDays ?? DEFAULT_LOG_RETENTION_DAYS,
    ...(o.concurrency === undefined ? {} : { concurrency: o.concurrency }),
    ...(o.chain === undefined ? {} : { chain: o.chain }),
    ...(o.pollIntervalMs === undefined ? {} : { pollIntervalMs: o.pollIntervalMs }),
    ...(o.claimIntervalMs === undefined ? {} : { claimIntervalMs: o.claimIntervalMs }),
    ...(o.heartbeatMs === undefined ? {} : { heartbeatMs: o.heartbeatMs }),
    ...(o.concurrencyPerOrganization === undefined ? {} : { perOrganization: o.concurrencyPerOrganization }),
  });
  return {
    sink: new EventBatcher(o.clock),
    feed,
    dispatcher,
    eventLog,
    resender: new WebhookResender(eventLog, sender, o.clock, openSecret),
    requeueFailed: (request) => requeueFailed(o.db, request),
    checkUrl: async (url) => {
      try {
        return await guard.check(new URL(url));
      } catch {
        return "the URL is not an absolute http:// or https:// URL";
      }
    },
  };
}
