import { DIRECTORY_EVENT_KINDS } from "../../src/directory/event-kinds.js";
import type { EventSink, OutboxBatch } from "../../src/directory/events.js";
import { type Clock, systemClock } from "../../src/platform/clock.js";
import { EventBatcher } from "../../src/storage/event-store.js";
import { createTestApp, type TestApp } from "./app.js";

export interface RecordedEvent {
  readonly kind: string;
  readonly resourceId: string;
  readonly clientId: string;
  readonly data: Record<string, unknown>;
}

export interface RecordingSink {
  readonly sink: EventSink;
  /** Committed events, in recording order. */
  events(): Promise<RecordedEvent[]>;
  clear(): Promise<void>;
}

/**
 * The webhooks module's sink (the rows are written as in production) that also keeps, in an array, the events of
 * every batch announced as committed: a rolled-back request leaves no event behind, so tests see exactly what would
 * be delivered. It keeps the directory's changes only (user.* and group.*): a connection's own events (its
 * activation, recorded after its first successful request and off that request's path) and its API keys' events are
 * not what these tests count, and are tested apart (portal.setup-link-session.test.ts, api-keys.events.test.ts).
 */
export function recordingSink(clock: Clock = systemClock): RecordingSink {
  const outbox = new EventBatcher(clock);
  let recorded: RecordedEvent[] = [];
  const sink: EventSink = {
    batch: (client, events) => outbox.batch(client, events),
    committed(batch: OutboxBatch) {
      for (const row of batch.rows) {
        if (!row.event.startsWith("user.") && !row.event.startsWith("group.")) continue;
        recorded.push({
          kind: row.event,
          resourceId: row.orderingKey,
          clientId: batch.directoryId ?? "",
          data: JSON.parse(row.data) as Record<string, unknown>,
        });
      }
    },
  };
  return {
    sink,
    events: async () => [...recorded],
    async clear() {
      recorded = [];
    },
  };
}

export interface RecordingApp {
  readonly t: TestApp;
  readonly recorder: RecordingSink;
  close(): Promise<void>;
}

/** A test app whose directory events are recorded. */
export async function createRecordingApp(): Promise<RecordingApp> {
  const recorder = recordingSink();
  const t = await createTestApp({ extra: { eventSink: recorder.sink } });
  return { t, recorder, close: () => t.close() };
}

/** The directory's own kinds (users, groups, memberships): `event=` of a feed reader that counts only those. */
export const DIRECTORY_CHANGE_KINDS = DIRECTORY_EVENT_KINDS.filter((kind) => /^(user|group)\./.test(kind)).join(",");

/**
 * How long a test polls the events feed for what it committed. The feed hands out an event once no transaction
 * anywhere on the PostgreSQL server could still commit an earlier one (gap-free), so another test file's long
 * transaction on the same server (a large seed, a CREATE DATABASE) delays it: a reader polls, as production readers
 * do, within the test's own timeout.
 */
export const FEED_WAIT = { timeout: 45_000, interval: 100 } as const;
